import CGeomonShims
#if canImport(Glibc)
import Glibc
#endif

/// A mutex with one condition variable, waited on against the monotonic clock (a wall-clock
/// step never stretches or cuts a wait).
final class Condition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    func broadcast() { pthread_cond_broadcast(cond) }

    /// The monotonic deadline `seconds` from now, for `wait(until:)`.
    static func deadline(after seconds: Double) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let whole = Int(seconds.rounded(.down))
        var nanoseconds = now.tv_nsec + Int((seconds - Double(whole)) * 1e9)
        var wholeSeconds = now.tv_sec + whole
        if nanoseconds >= 1_000_000_000 { nanoseconds -= 1_000_000_000; wholeSeconds += 1 }
        return timespec(tv_sec: wholeSeconds, tv_nsec: nanoseconds)
    }

    /// Waits (the lock held) until signalled or `deadline` passed; false when it passed.
    func wait(until deadline: timespec) -> Bool {
        var deadline = deadline
        return pthread_cond_timedwait(cond, mutex, &deadline) != ETIMEDOUT
    }
}

/// Runs `body` on a new detached thread named `name` (at most 15 bytes are kept), never on a
/// concurrency pool thread.
func startThread(named name: String, _ body: @escaping @Sendable () -> Void) {
    final class Box {
        let name: String
        let body: @Sendable () -> Void
        init(_ name: String, _ body: @escaping @Sendable () -> Void) { self.name = name; self.body = body }
    }
    let box = Unmanaged.passRetained(Box(name, body)).toOpaque()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    var thread = pthread_t()
    let rc = pthread_create(&thread, &attributes, { argument in
        let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
        geomon_name_this_thread(box.name)
        box.body()
        return nil
    }, box)
    pthread_attr_destroy(&attributes)
    if rc != 0 {
        // No thread could be made (resource limits): run here rather than lose the work.
        Unmanaged<Box>.fromOpaque(box).takeRetainedValue().body()
    }
}
