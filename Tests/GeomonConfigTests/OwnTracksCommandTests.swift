import Foundation
import GeomonConfig
import GeomonCore
import GeomonTestSupport
import Testing

/// OwnTracks commands as `publish.mqtt.commands` reads them, on the command files of
/// owntracks/json-schema's tests (Tests/Fixtures/places/SOURCE.md) and written ones.
@Suite struct OwnTracksCommandTests {
    static func parse(_ text: String) -> Result<OwnTracksCommand, OwnTracksCommand.Failure> {
        OwnTracksCommand.parse(Array(text.utf8))
    }

    static func fixture(_ name: String) throws -> Result<OwnTracksCommand, OwnTracksCommand.Failure> {
        OwnTracksCommand.parse(Array(try Data(contentsOf: TestSupport.fixture("places/" + name))))
    }

    @Test func setWaypointsFromOwnTracksTests() throws {
        guard case .success(let command) = try Self.fixture("owntracks-cmd-setWaypoints.json"),
              case let .setWaypoints(waypoints, skipped) = command.action else { Issue.record("not a setWaypoints"); return }
        #expect(command.name == "setWaypoints")
        #expect(waypoints.map(\.key) == ["rid:TESTING-ID-1", "rid:TESTING-ID-2"])
        #expect(waypoints.map(\.fenceID) == ["TESTING-ID-1", "TESTING-ID-2"])
        #expect(waypoints.map(\.name) == ["home", "work"])
        #expect(waypoints[1].center == Coordinate(latitude: 37.3, longitude: -122.3) && waypoints[1].radiusMeters == 100)
        #expect(waypoints.allSatisfy { !$0.removes })
        #expect(skipped.count == 1 && skipped[0].contains("follow region"))
    }

    @Test func aWaypointWithoutARegionRemovesItsIdentity() throws {
        guard case .success(let command) = try Self.fixture("owntracks-cmd-setWaypoints-delete.json"),
              case let .setWaypoints(waypoints, _) = command.action else { Issue.record("not a setWaypoints"); return }
        #expect(waypoints.count == 1 && waypoints[0].removes && waypoints[0].key == "rid:TESTING-ID-2")
    }

    @Test func brokenEmptyAndOtherCommands() throws {
        guard case .failure(let failure) = try Self.fixture("owntracks-cmd-setWaypoints-illegal.json") else { Issue.record("accepted invalid JSON"); return }
        #expect(failure.message.contains("leading zero"))
        guard case .success(let empty) = try Self.fixture("owntracks-android-cmd_set_waypoints.json"),
              case let .setWaypoints(none, skipped) = empty.action else { Issue.record("not a setWaypoints"); return }
        #expect(none.isEmpty && skipped.isEmpty)
        for (text, expected) in [(#"{"_type":"cmd","action":"clearWaypoints"}"#, "clearWaypoints"), (#"{"_type":"cmd","action":"waypoints"}"#, "waypoints"),
                                 (#"{"_type":"cmd","action":"reportLocation"}"#, "reportLocation")] {
            guard case .success(let command) = Self.parse(text) else { Issue.record("\(text) not parsed"); continue }
            #expect(command.name == expected)
        }
        // What could change hooks or the broker, and anything else, is refused by name.
        for action in ["setConfiguration", "dump", "restart", "action"] {
            guard case .success(let command) = Self.parse(#"{"_type":"cmd","action":"\#(action)"}"#), case .refused = command.action else {
                Issue.record("\(action) not refused")
                continue
            }
            #expect(command.name == action)
        }
        for text in ["", "[]", #"{"_type":"location","lat":1,"lon":2}"#, #"{"_type":"cmd"}"#, #"{"_type":"cmd","action":"setWaypoints"}"#] {
            guard case .failure = Self.parse(text) else { Issue.record("\(text) accepted"); continue }
        }
        let big = #"{"_type":"cmd","action":"clearWaypoints","pad":""# + String(repeating: "x", count: OwnTracksCommand.maxBytes) + #""}"#
        guard case .failure(let tooBig) = Self.parse(big) else { Issue.record("an oversized command accepted"); return }
        #expect(tooBig.message.contains("more than the \(OwnTracksCommand.maxBytes)"))
    }

    @Test func waypointsAreCheckedLikeProfileFences() {
        let text = #"{"_type":"cmd","action":"setWaypoints","waypoints":[{"desc":"ok","lat":46,"lon":7,"rad":100,"tst":1},"#
            + #"{"desc":"arctic","lat":88,"lon":7,"rad":100,"tst":2},{"desc":"huge","lat":10,"lon":7,"rad":2000000,"tst":3},"#
            + #"{"desc":"beacon","uuid":"X","lat":1,"lon":1,"rad":1},{"lat":1,"lon":1,"rad":1},{"desc":"no lat","lon":1,"rad":1},"#
            + #"{"desc":"bad\u0001id","lat":1,"lon":1,"rad":1},{"desc":"no tst","lat":1,"lon":2,"rad":30}]}"#
        guard case .success(let command) = Self.parse(text), case let .setWaypoints(waypoints, skipped) = command.action else {
            Issue.record("not parsed")
            return
        }
        #expect(waypoints.map(\.key) == ["tst:1", "desc:no tst"])
        #expect(skipped.count == 6, "\(skipped)")
        #expect(skipped.contains { $0.contains("arctic") } && skipped.contains { $0.contains("huge") } && skipped.contains { $0.contains("iBeacon") })
        var many = #"{"_type":"cmd","action":"setWaypoints","waypoints":["#
        many += (0...OwnTracksCommand.maxWaypoints).map { #"{"desc":"w\#($0)","lat":1,"lon":1,"rad":10,"tst":\#($0)}"# }.joined(separator: ",") + "]}"
        guard case .failure(let failure) = Self.parse(many) else { Issue.record("too many waypoints accepted"); return }
        #expect(failure.message.contains("more than the \(OwnTracksCommand.maxWaypoints)"))
    }
}
