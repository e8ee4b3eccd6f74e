#ifndef GEOMON_SHIMS_H
#define GEOMON_SHIMS_H
/* Helpers for what Swift cannot reach on glibc (_GNU_SOURCE spawn attributes). */
#include <stddef.h>
#include <sys/types.h>

int geomon_shims_version(void);

/*
 * Spawns `path` with `argv`/`envp` (NULL-terminated) WITHOUT a shell:
 *  - in a new session (POSIX_SPAWN_SETSID), so it leads its own session and process
 *    group (pgid == pid) and has no controlling terminal;
 *  - with an empty signal mask and every signal reset to its default disposition
 *    (the parent ignores SIGPIPE; a hook must not inherit that);
 *  - with stdin/stdout/stderr dup'ed from the given fds and every other fd closed
 *    (posix_spawn_file_actions_addclosefrom_np, glibc >= 2.34);
 *  - with its working directory set to `cwd` (when not NULL).
 * Returns 0 and stores the pid, or an errno value (ENOENT, EACCES, ENOEXEC, ...): glibc
 * reports exec failures of the child as posix_spawn's return value.
 */
int geomon_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                 const char *cwd, int stdin_fd, int stdout_fd, int stderr_fd);

/* pidfd_open(2) through syscall(2); -1 with errno set when unsupported. */
int geomon_pidfd_open(pid_t pid);

/* One descriptor that is readable when any of `fds` (count `n`, -1 entries skipped) is:
 * an epoll instance (close-on-exec) with each watched for input, level-triggered. -1 with
 * errno set on failure. (struct epoll_event is packed, which Swift does not import.) */
int geomon_epoll_watching(const int *fds, int n);

/* fcntl helpers (variadic fcntl does not import into Swift). */
/* Whether a TCP connection to host:port is accepted within timeout_ms (connected, then closed
   at once): ETIMEDOUT when nothing answered in time (a host whose packets are dropped, where a
   blocking connect retries its SYN for about two minutes), else 0, also when the name does not
   resolve or the connection is refused at once (the real connect then says why). */
int geomon_tcp_answers(const char *host, const char *port, int timeout_ms);

int geomon_set_nonblocking(int fd);
int geomon_set_cloexec(int fd);

/* pipe2(O_CLOEXEC): fds[0] read end, fds[1] write end. */
int geomon_pipe_cloexec(int fds[2]);

/* 1 when `pid` (our child) has terminated and is a zombie waiting to be reaped, 0 when it
 * still runs, -1 on error. Does NOT reap (waitid WNOWAIT), so the pid and its process group
 * id cannot be reused while we still signal the group. */
int geomon_child_exited_nowait(pid_t pid);

/* An anonymous in-memory file (memfd_create, close-on-exec) holding `len` bytes, offset 0.
 * Returns the fd or -1 (errno set). Used as a hook's stdin: it never blocks us, and a hook
 * that never reads it costs nothing. */
int geomon_memfd_with_bytes(const void *bytes, size_t len);

/* waitpid decoding (the W* macros do not import into Swift). */
int geomon_wifexited(int status);
int geomon_wexitstatus(int status);
int geomon_wifsignaled(int status);
int geomon_wtermsig(int status);

/* Names the calling thread (at most 15 bytes kept), as ps and top show it. */
void geomon_name_this_thread(const char *name);

/*
 * Mapped files that may shrink under the reader. A read-only mapping of a file that another
 * process truncates (an editor or `>` rewriting it in place) raises SIGBUS on the first touch
 * of a page beyond the new end. A registered range gets such a page replaced by a page of
 * zeros (the reader then sees the text end early) and is marked faulted, instead of the
 * process dying. Faults outside every registered range go to the disposition there was
 * before (the default: the process dies as it would have).
 * geomon_mapping_guard returns a slot (>= 0), or -1 when all are taken (the mapping is then
 * unguarded); geomon_mapping_unguard frees the slot and returns 1 when a page was replaced.
 */
int geomon_mapping_guard(const void *base, size_t size);
int geomon_mapping_unguard(int slot);
int geomon_mapping_faulted(int slot);
#endif
