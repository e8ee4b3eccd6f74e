/// GeomonStore — see docs/ARCHITECTURE.md for what this layer owns.
public enum GeomonStoreInfo {
    public static let name = "GeomonStore"
}
