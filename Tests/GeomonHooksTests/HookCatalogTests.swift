import GeomonCore
import GeomonHooks
import Testing

/// Which hook commands an edit of the profile replaced (a reload moves their deliveries).
struct HookCatalogTests {
    static func settings(enter: [[String]], exit: [[String]] = []) -> HookSettings {
        var settings = HookSettings()
        settings.enter = enter.map { HookSpec(exec: $0) }
        settings.exit = exit.map { HookSpec(exec: $0) }
        return settings
    }

    static func pairs(_ old: HookSettings, _ new: HookSettings) -> [String] {
        HookCatalog.replacements(from: old, to: new).map { "\($0.from) -> \($0.to)" }
    }

    @Test func aCommandEditedInPlaceIsPairedWithItsNewForm() {
        let old = Self.settings(enter: [["./notify.sh"], ["./upload.sh"]], exit: [["./notify.sh"]])
        let new = Self.settings(enter: [["./notify.sh", "--verbose"], ["./upload.sh"]], exit: [["./notify.sh", "--verbose"]])
        #expect(Self.pairs(old, new) == [#"["./notify.sh"] -> ["./notify.sh","--verbose"]"#])
        #expect(HookCatalog.replacements(from: old, to: new).first?.argv == ["./notify.sh", "--verbose"])
    }

    @Test func nothingUnclearIsPaired() {
        let two = Self.settings(enter: [["./a.sh"], ["./b.sh"]])
        // Reordered: every command is still listed.
        #expect(Self.pairs(two, Self.settings(enter: [["./b.sh"], ["./a.sh"]])).isEmpty)
        // Two commands replaced by one: which one's deliveries would it take?
        #expect(Self.pairs(two, Self.settings(enter: [["./c.sh"]])).isEmpty)
        // Removed: nothing at its place.
        #expect(Self.pairs(two, Self.settings(enter: [["./a.sh"]])).isEmpty)
        // Places that disagree: under enter the new one, under exit another.
        let both = Self.settings(enter: [["./a.sh"]], exit: [["./a.sh"]])
        #expect(Self.pairs(both, Self.settings(enter: [["./x.sh"]], exit: [["./y.sh"]])).isEmpty)
        // The new command was listed before (two hooks merged into one that existed).
        #expect(Self.pairs(two, Self.settings(enter: [["./b.sh"], ["./b.sh", "-v"]])).isEmpty)
    }
}
