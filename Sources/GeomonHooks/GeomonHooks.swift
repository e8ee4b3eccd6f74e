/// GeomonHooks — see docs/ARCHITECTURE.md for what this layer owns.
public enum GeomonHooksInfo {
    public static let name = "GeomonHooks"
}
