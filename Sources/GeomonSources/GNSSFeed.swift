public import GeomonCore

/// What `geomon run` needs from its GNSS source: gpsd's shape. `GPSDSource` is the one
/// production feed; a test can hand the daemon a receiver model of the same shape.
///
/// The daemon connects (asking `backoff` when to retry after a failure), switches the watch
/// with the power policy, waits on `fileDescriptor` and calls `readAvailable()` when it is
/// readable. Nothing here blocks, sleeps or retries by itself.
public protocol GNSSFeed: AnyObject {
    var endpoint: String { get }
    var state: GPSDSource.State { get }
    var backoff: ReconnectBackoff { get set }
    /// The descriptor to wait on while connected.
    var fileDescriptor: Int32? { get }
    @discardableResult
    func connect() throws(GPSDError) -> [GPSDSource.Event]
    func watch(enabled: Bool, device: String?) throws(GPSDError)
    /// Whether the watch is wanted (the last `watch(enabled:)`).
    var watchEnabled: Bool { get }
    /// Sends the watch's state again on an open connection (gpsd drops clients that neither
    /// watch nor send commands).
    func keepAlive() throws(GPSDError)
    func readAvailable() -> [GPSDSource.Event]
    @discardableResult
    func disconnect(reason: String) -> [GPSDSource.Event]
    /// True while an epoch waits for the rest of its reports (the daemon then calls
    /// `flushPendingFix` `GPSDSource.epochBudget` after it was first held).
    var hasPendingFix: Bool { get }
    /// The time of the epoch held, if any.
    var pendingFixTime: UTCTime? { get }
    func flushPendingFix() -> [GPSDSource.Event]
    /// The device the last report came from, if gpsd named it.
    var reportingDevice: String? { get }
    /// The one device gpsd lists (DEVICES), before any report named it; nil otherwise.
    var listedDevice: String? { get }
    /// Writes raw bytes to the receiver through gpsd (the power methods' commands).
    func sendToDevice(_ bytes: [UInt8], device: String) throws(GPSDError)
}

extension GPSDSource: GNSSFeed {}
