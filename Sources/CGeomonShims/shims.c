#define _GNU_SOURCE
#include "geomon_shims.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <netdb.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
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

/* Mapped files that may shrink under the reader (geomon_mapping_guard). */

#define GEOMON_GUARD_SLOTS 64

static struct {
    _Atomic uintptr_t base;
    _Atomic size_t size;
    _Atomic int faulted;
} guard_slots[GEOMON_GUARD_SLOTS];

static struct sigaction guard_previous;
static uintptr_t guard_page_size;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;
static int guard_installed;

static void guard_handler(int sig, siginfo_t *info, void *context) {
    uintptr_t address = (uintptr_t)info->si_addr;
    for (int i = 0; i < GEOMON_GUARD_SLOTS; i++) {
        uintptr_t base = atomic_load(&guard_slots[i].base);
        if (base == 0 || address < base || address - base >= atomic_load(&guard_slots[i].size)) continue;
        void *page = (void *)(address & ~(guard_page_size - 1));
        if (mmap(page, guard_page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
            atomic_store(&guard_slots[i].faulted, 1);
            return;    /* the access is retried and reads zeros */
        }
        break;
    }
    /* Not a guarded page: what would have happened without the guard. */
    if (guard_previous.sa_flags & SA_SIGINFO) {
        if (guard_previous.sa_sigaction != NULL) {
            guard_previous.sa_sigaction(sig, info, context);
            return;
        }
    } else if (guard_previous.sa_handler != SIG_DFL && guard_previous.sa_handler != SIG_IGN) {
        guard_previous.sa_handler(sig);
        return;
    }
    /* The default: returning re-runs the access, which now kills the process with SIGBUS. */
    struct sigaction fallback;
    memset(&fallback, 0, sizeof fallback);
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(SIGBUS, &fallback, NULL);
}

static void guard_install(void) {
    guard_page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = guard_handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    guard_installed = sigaction(SIGBUS, &action, &guard_previous) == 0;
}

int geomon_mapping_guard(const void *base, size_t size) {
    if (base == NULL || size == 0) return -1;
    pthread_once(&guard_once, guard_install);
    if (!guard_installed) return -1;
    for (int i = 0; i < GEOMON_GUARD_SLOTS; i++) {
        uintptr_t expected = 0;
        if (atomic_compare_exchange_strong(&guard_slots[i].base, &expected, (uintptr_t)-1)) {
            atomic_store(&guard_slots[i].faulted, 0);
            atomic_store(&guard_slots[i].size, size);
            atomic_store(&guard_slots[i].base, (uintptr_t)base);
            return i;
        }
    }
    return -1;
}

int geomon_mapping_faulted(int slot) {
    if (slot < 0 || slot >= GEOMON_GUARD_SLOTS) return 0;
    return atomic_load(&guard_slots[slot].faulted);
}

int geomon_mapping_unguard(int slot) {
    if (slot < 0 || slot >= GEOMON_GUARD_SLOTS) return 0;
    int faulted = atomic_load(&guard_slots[slot].faulted);
    atomic_store(&guard_slots[slot].size, 0);
    atomic_store(&guard_slots[slot].base, 0);
    return faulted;
}

static long long geomon_monotonic_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int geomon_tcp_answers(const char *host, const char *port, int timeout_ms) {
    struct addrinfo hints, *list = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &list) != 0) return 0;
    long long deadline = geomon_monotonic_ms() + timeout_ms;
    int result = 0;
    for (struct addrinfo *a = list; a != NULL; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        int rc = connect(fd, a->ai_addr, a->ai_addrlen);
        if (rc == 0) { close(fd); result = 0; break; }
        if (errno != EINPROGRESS) { close(fd); result = 0; continue; }
        struct pollfd p = { .fd = fd, .events = POLLOUT, .revents = 0 };
        long long left = deadline - geomon_monotonic_ms();
        int ready = left > 0 ? poll(&p, 1, (int)left) : 0;
        while (ready < 0 && errno == EINTR) {
            left = deadline - geomon_monotonic_ms();
            ready = left > 0 ? poll(&p, 1, (int)left) : 0;
        }
        if (ready > 0) {
            int err = 0;
            socklen_t len = sizeof err;
            if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
            close(fd);
            result = 0;
            if (err == 0) break;   /* connected */
            continue;              /* refused: the next address, as the real connect tries them */
        }
        close(fd);
        result = ETIMEDOUT;
        if (geomon_monotonic_ms() >= deadline) break;
    }
    freeaddrinfo(list);
    return result;
}
