/// GeomonConfig — see docs/ARCHITECTURE.md for what this layer owns.
public enum GeomonConfigInfo {
    public static let name = "GeomonConfig"
}
