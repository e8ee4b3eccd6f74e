/// GeomonSources — see docs/ARCHITECTURE.md for what this layer owns.
public enum GeomonSourcesInfo {
    public static let name = "GeomonSources"
}
