#define _GNU_SOURCE
#include "geomon_shims.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int geomon_shims_version(void) { return 2; }

int geomon_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                 const char *cwd, int stdin_fd, int stdout_fd, int stderr_fd) {
    posix_spawnattr_t attr;
    posix_spawn_file_actions_t actions;
    int rc = posix_spawnattr_init(&attr);
    if (rc != 0) return rc;
    rc = posix_spawn_file_actions_init(&actions);
    if (rc != 0) {
        posix_spawnattr_destroy(&attr);
        return rc;
    }

    sigset_t empty, all;
    sigemptyset(&empty);
    sigfillset(&all);
    short flags = POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if ((rc = posix_spawnattr_setflags(&attr, flags)) != 0) goto done;
    if ((rc = posix_spawnattr_setsigmask(&attr, &empty)) != 0) goto done;
    if ((rc = posix_spawnattr_setsigdefault(&attr, &all)) != 0) goto done;

    /* dup2 clears FD_CLOEXEC on the target; the sources are O_CLOEXEC pipes. */
    if ((rc = posix_spawn_file_actions_adddup2(&actions, stdin_fd, 0)) != 0) goto done;
    if ((rc = posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1)) != 0) goto done;
    if ((rc = posix_spawn_file_actions_adddup2(&actions, stderr_fd, 2)) != 0) goto done;
    if ((rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3)) != 0) goto done;
    if (cwd != NULL) {
        if ((rc = posix_spawn_file_actions_addchdir_np(&actions, cwd)) != 0) goto done;
    }
    rc = posix_spawn(pid, path, &actions, &attr, argv, envp);

done:
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return rc;
}

int geomon_pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int geomon_epoll_watching(const int *fds, int n) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) return -1;
    for (int i = 0; i < n; i++) {
        if (fds[i] < 0) continue;
        struct epoll_event event = { .events = EPOLLIN, .data.fd = fds[i] };
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &event) != 0) {
            int saved = errno;
            close(ep);
            errno = saved;
            return -1;
        }
    }
    return ep;
}

int geomon_set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) return -1;
    return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

int geomon_set_cloexec(int fd) {
    int flags = fcntl(fd, F_GETFD);
    if (flags < 0) return -1;
    return fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

int geomon_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int geomon_wifexited(int status) { return WIFEXITED(status); }
int geomon_wexitstatus(int status) { return WEXITSTATUS(status); }
int geomon_wifsignaled(int status) { return WIFSIGNALED(status); }
int geomon_wtermsig(int status) { return WTERMSIG(status); }

int geomon_child_exited_nowait(pid_t pid) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    int rc;
    do {
        rc = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) return -1;
    return info.si_pid == pid ? 1 : 0;
}

int geomon_memfd_with_bytes(const void *bytes, size_t len) {
    int fd = memfd_create("geomon-hook-stdin", MFD_CLOEXEC);
    if (fd < 0) {
        /* Fallback: an unlinked temporary file. */
        char path[] = "/tmp/geomon-stdin-XXXXXX";
        fd = mkostemp(path, O_CLOEXEC);
        if (fd < 0) return -1;
        unlink(path);
    }
    const char *p = bytes;
    size_t left = len;
    while (left > 0) {
        ssize_t n = write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            int saved = errno;
            close(fd);
            errno = saved;
            return -1;
        }
        p += n;
        left -= (size_t)n;
    }
    if (lseek(fd, 0, SEEK_SET) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

void geomon_name_this_thread(const char *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}
