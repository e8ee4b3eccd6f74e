/// What a motion sensor says (`sources.motion`): the device moves, or stands still (for at
/// least the source's `still_after`). The policy keeps the receiver off while the device
/// stands still (docs/power.md, "Wake on motion").
public enum Motion: String, Hashable, Sendable {
    case moving
    case still
}
