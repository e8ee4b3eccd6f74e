/// GeomonDaemon — see docs/ARCHITECTURE.md for what this layer owns.
public enum GeomonDaemonInfo {
    public static let name = "GeomonDaemon"
}
