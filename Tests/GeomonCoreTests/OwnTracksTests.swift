import GeomonCore
import GeomonFormat
import Testing

/// The OwnTracks messages of a commit, field by field.
struct OwnTracksTests {
    static func profile(_ locations: MQTTSettings.Locations) -> (Profile, MQTTSettings) {
        var profile = Profile(name: "van-1", mode: .regions)
        profile.fences = [
            Fence(id: "home", name: "Home", shape: .circle(center: Coordinate(latitude: 47, longitude: 8), radiusMeters: 100.4)),
            Fence(id: "yard", shape: .polygons([PolygonRings(shell: [Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 0, longitude: 1), Coordinate(latitude: 1, longitude: 0)])])),
        ]
        var mqtt = MQTTSettings(host: "broker", topic: "owntracks/geomon/van")
        mqtt.locations = locations
        profile.publish.mqtt = mqtt
        return (profile, mqtt)
    }

    static func fix(_ ms: Int64, accuracy: Double = 4.6, speed: Double? = 10, course: Double? = 359.7) -> Fix {
        Fix(time: UTCTime(millisecondsSince1970: ms), coordinate: Coordinate(latitude: 47.123456789, longitude: 8.5),
            horizontalAccuracyMeters: accuracy, speedMetersPerSecond: speed, courseDegrees: course)
    }

    static func event(_ kind: EventKind, fence: String?, ms: Int64) -> GeoEvent {
        GeoEvent(id: "e\(ms)", kind: kind, fenceID: fence, time: UTCTime(millisecondsSince1970: ms),
                 coordinate: Coordinate(latitude: 47.1, longitude: 8.2), accuracyMeters: 0.2, rule: .recorded("t"))
    }

    @Test func aLocationHasOwnTracksFieldsAndUnits() {
        let (profile, mqtt) = Self.profile(.all)
        let own = OwnTracks(settings: mqtt, profile: profile)
        let message = own.location(Self.fix(1_700_000_000_999), trigger: "t", inside: ["yard", "home"])
        // tst whole seconds (floor), acc rounded, vel km/h, cog in 0..<360, inregions by profile order.
        #expect(message.payload == #"{"_type":"location","acc":5,"cog":0,"inregions":["Home","yard"],"inrids":["home","yard"],"lat":47.1234568,"lon":8.5,"t":"t","tid":"n1","tst":1700000000,"vel":36}"#)
        #expect(message.topic == "owntracks/geomon/van" && message.retain && message.kind == .location)
        // An unknown speed and course are left out; acc is never below 1 (Home Assistant needs it).
        let bare = own.location(Self.fix(-1, accuracy: 0.1, speed: nil, course: nil), trigger: "t", inside: [])
        #expect(bare.payload == #"{"_type":"location","acc":1,"lat":47.1234568,"lon":8.5,"t":"t","tid":"n1","tst":-1}"#)
    }

    @Test func figuresTooLargeForAWholeNumberAreHeldNotATrap() {
        // A misbehaving receiver's speed and course of 1e300: vel is held at the largest whole
        // number, cog is still a bearing; an accuracy of 1e300 m likewise.
        let (profile, mqtt) = Self.profile(.all)
        let own = OwnTracks(settings: mqtt, profile: profile)
        let message = own.location(Self.fix(0, accuracy: 1e300, speed: 1e300, course: 1e300), trigger: "t", inside: [])
        #expect(message.payload.contains(#""vel":\#(Int.max)"#) && message.payload.contains(#""acc":\#(Int.max)"#), "\(message.payload)")
        let cog = message.payload.split(separator: ",").first { $0.hasPrefix(#""cog":"#) }.flatMap { Int($0.dropFirst(6)) }
        #expect(cog.map { (0..<360).contains($0) } == true, "\(message.payload)")
    }

    @Test func transitionsGoToTheEventTopicWithAStableRegionTime() {
        let (profile, mqtt) = Self.profile(.significant)
        let own = OwnTracks(settings: mqtt, profile: profile)
        let message = own.transition(Self.event(.exit, fence: "home", ms: 1_700_000_000_000))
        #expect(message.topic == "owntracks/geomon/van/event" && !message.retain && message.eventID == "e1700000000000")
        let wtst = OwnTracks.waypointTime(fenceID: "home")
        #expect(message.payload == #"{"_type":"transition","acc":1,"desc":"Home","event":"leave","lat":47.1,"lon":8.2,"rid":"home","t":"c","tid":"n1","tst":1700000000,"wtst":\#(wtst)}"#)
        #expect(wtst == OwnTracks.waypointTime(fenceID: "home") && wtst != OwnTracks.waypointTime(fenceID: "yard"))
        #expect((1_000_000_000..<2_000_000_000).contains(wtst))
    }

    @Test func anExitSaysHowLongTheDeviceWasInsideAndMovementEventsAreLocationsWithTheirFigures() {
        let (profile, mqtt) = Self.profile(.none)
        let own = OwnTracks(settings: mqtt, profile: profile)
        var exit = Self.event(.exit, fence: "home", ms: 1_700_000_000_000)
        var inside = EventFigures()
        inside.insideSeconds = 754.25
        exit.figures = inside
        #expect(own.transition(exit).payload.contains(#""event":"leave","geomon":{"inside_s":754.3},"lat""#))
        var trip = Self.event(.tripEnd, fence: nil, ms: 1_700_000_100_000)
        var figures = EventFigures()
        figures.distanceMeters = 4820.61
        figures.durationSeconds = 1146
        trip.figures = figures
        var held = Self.event(.enter, fence: "yard", ms: 1_700_000_200_000)
        held.suppressed = true
        var commit = Monitor.Commit()
        commit.events = [trip, held]
        let messages = own.messages(for: commit, inside: [])
        // The trip's end is a location with its figures; the enter a cooldown held back is not published.
        #expect(messages.map(\.payload) == [
            #"{"_type":"location","acc":1,"geomon":{"event":"trip_end","duration_s":1146,"distance_m":4820.6},"lat":47.1,"lon":8.2,"t":"c","tid":"n1","tst":1700000100}"#,
        ])
    }

    /// A leave decided without a fix of its own (a reload closing a stay, a window closing at
    /// its deadline) is followed by the newest fix with the new `inregions`: the retained
    /// location no longer lists the region. A leave of a stay entered under a waypoint since
    /// replaced carries the time its enter did.
    @Test func aLeaveWithoutAFixIsFollowedByALocationWithoutTheRegion() {
        let (profile, mqtt) = Self.profile(.significant)
        var own = OwnTracks(settings: mqtt, profile: profile)
        var commit = Monitor.Commit()
        commit.events = [Self.event(.exit, fence: "home", ms: 5000)]
        own.stayTimes["home"] = 1_600_000_000
        let messages = own.messages(for: commit, inside: ["yard"], lastFix: Self.fix(4000))
        #expect(messages.map(\.kind) == [.transition, .location])
        #expect(messages.first?.payload.contains(#""wtst":1600000000"#) == true, "\(messages[0].payload)")
        #expect(messages.last?.payload.contains(#""inregions":["yard"]"#) == true && messages.last?.payload.contains(#""t":"c""#) == true)
        // Dated at the leave (5 s), not at the older fix (4 s): newer than the retained location.
        #expect(messages.last?.payload.contains(#""tst":5,"#) == true && messages.last?.time == UTCTime(millisecondsSince1970: 5000), "\(messages.last!.payload)")
        // An enter still carries the waypoint's own time.
        let enter = own.transition(Self.event(.enter, fence: "home", ms: 6000))
        #expect(enter.payload.contains("\"wtst\":\(OwnTracks.waypointTime(fenceID: "home"))"))
        // With `locations: none`, nothing more; with no fix ever, nothing to place it at.
        #expect(OwnTracks(settings: Self.profile(.none).1, profile: profile).messages(for: commit, inside: [], lastFix: Self.fix(4000)).count == 1)
        #expect(own.messages(for: commit, inside: []).count == 1)
    }

    /// An exit the fence's `events` leave out (`unlisted`) is a leave like any other: Home
    /// Assistant ignores locations while it holds the device in a region, until its leave.
    @Test func anUnlistedExitIsALeave() {
        let (profile, mqtt) = Self.profile(.none)
        let own = OwnTracks(settings: mqtt, profile: profile)
        var commit = Monitor.Commit()
        var exit = Self.event(.exit, fence: "home", ms: 5000)
        exit.unlisted = true
        commit.events = [exit]
        let messages = own.messages(for: commit, inside: [])
        #expect(messages.map(\.kind) == [.transition])
        #expect(messages.first?.payload.contains(#""event":"leave""#) == true && messages.first?.eventID == exit.id)
    }

    @Test(arguments: [MQTTSettings.Locations.none, .significant, .all])
    func aCommitGivesTheMessagesItsLocationsSettingAsksFor(_ locations: MQTTSettings.Locations) {
        let (profile, mqtt) = Self.profile(locations)
        let own = OwnTracks(settings: mqtt, profile: profile)
        var commit = Monitor.Commit()
        commit.fixes = [Self.fix(1000), Self.fix(2000)]
        commit.events = [Self.event(.enter, fence: "home", ms: 1000), Self.event(.dwell, fence: "yard", ms: 2000)]
        let kinds = own.messages(for: commit, inside: ["home"]).map { message -> String in
            message.payload.contains("\"geomon\"") ? "dwell" : (message.kind == .transition ? "transition" : "location \(message.payload.contains("\"t\":\"c\"") ? "c" : "t")")
        }
        switch locations {
        case .none: #expect(kinds == ["transition", "dwell"])
        case .significant: #expect(kinds == ["transition", "dwell", "location c"])
        case .all: #expect(kinds == ["transition", "dwell", "location t", "location c"])
        }
        // A message that carries an event names it: the outbox's bounds never drop it while
        // pending, and a commit replayed after a crash does not queue it twice.
        let carried = own.messages(for: commit, inside: ["home"]).compactMap(\.eventID)
        #expect(carried == commit.events.map(\.id))
        // No event, no significant change: only `all` publishes.
        var quiet = Monitor.Commit()
        quiet.fixes = [Self.fix(3000)]
        #expect(own.messages(for: quiet, inside: []).count == (locations == .all ? 1 : 0))
        quiet.events = [Self.event(.location, fence: nil, ms: 3000)]
        #expect(own.messages(for: quiet, inside: []).count == (locations == .none ? 0 : 1))
    }

    @Test func aModeChangeIsALocationWithItsFiguresAndTheModeInEffectPicksTheStream() {
        let (profile, mqtt) = Self.profile(.all)
        let own = OwnTracks(settings: mqtt, profile: profile)
        var change = Self.event(.mode, fence: nil, ms: 1_700_000_000_000)
        var figures = EventFigures()
        figures.mode = "low"
        figures.modeFrom = "parked"
        figures.modeCause = .battery
        figures.batteryPercent = 19
        figures.externalPower = false
        change.figures = figures
        var commit = Monitor.Commit()
        commit.fixes = [Self.fix(1_700_000_000_000)]
        commit.events = [change]
        // The profile streams every fix; the mode in effect says none.
        commit.locations = MQTTSettings.Locations.none
        #expect(own.messages(for: commit, inside: []).map(\.payload) == [
            #"{"_type":"location","acc":1,"cog":0,"geomon":{"event":"mode","mode":"low","from":"parked","cause":"battery","battery_pct":19,"external_power":false},"lat":47.1,"lon":8.2,"t":"c","tid":"n1","tst":1700000000,"vel":36}"#,
        ])
        commit.locations = nil
        #expect(own.messages(for: commit, inside: []).count == 2)
        // Before the first fix a mode change has no position: nothing to publish.
        change.accuracyMeters = .infinity
        commit.events = [change]
        commit.fixes = []
        #expect(own.messages(for: commit, inside: []).isEmpty)
    }

    /// Home Assistant keeps a transition's speed and course until the next location, and shows
    /// the device's battery: the fix that confirmed the change gives `vel`/`cog`, the battery
    /// `batt`/`bs`.
    @Test func transitionsCarrySpeedCourseAndBattery() {
        let (profile, mqtt) = Self.profile(.significant)
        let own = OwnTracks(settings: mqtt, profile: profile)
        let battery = BatteryStatus(percent: 57, state: .unplugged)
        let message = own.transition(Self.event(.enter, fence: "home", ms: 1_700_000_000_000), confirmedBy: Self.fix(1_700_000_001_000), battery: battery)
        let wtst = OwnTracks.waypointTime(fenceID: "home")
        #expect(message.payload == #"{"_type":"transition","acc":1,"batt":57,"bs":1,"cog":0,"desc":"Home","event":"enter","lat":47.1,"lon":8.2,"rid":"home","t":"c","tid":"n1","tst":1700000000,"vel":36,"wtst":\#(wtst)}"#)
        var commit = Monitor.Commit()
        commit.fixes = [Self.fix(1_700_000_001_000, speed: 2.5, course: 90)]
        commit.events = [Self.event(.enter, fence: "home", ms: 1_700_000_000_000)]
        let messages = own.messages(for: commit, inside: ["home"], battery: BatteryStatus(percent: 100, state: .full))
        #expect(messages.count == 2)
        #expect(messages.allSatisfy { $0.payload.contains(#""batt":100,"bs":3"#) && $0.payload.contains(#""cog":90"#) && $0.payload.contains(#""vel":9"#) })
    }

    /// Dwell and approach messages are locations too: Home Assistant keeps the speed and course
    /// of the last location it got, so they carry those of their fix (or the newest known).
    @Test func dwellAndApproachLocationsCarrySpeedAndCourse() {
        let (profile, mqtt) = Self.profile(.none)
        let own = OwnTracks(settings: mqtt, profile: profile)
        var commit = Monitor.Commit()
        commit.fixes = [Self.fix(1_700_000_000_000, speed: 2.5, course: 90)]
        commit.events = [Self.event(.dwell, fence: "home", ms: 1_700_000_000_000), Self.event(.approach, fence: "home", ms: 1_700_000_000_000)]
        let messages = own.messages(for: commit, inside: ["home"])
        #expect(messages.count == 2)
        #expect(messages.allSatisfy { $0.payload.contains(#""cog":90"#) && $0.payload.contains(#""vel":9"#) }, "\(messages.map(\.payload))")
        // A dwell fired by deadline: no fix in its commit, the newest published one's.
        var deadline = Monitor.Commit()
        deadline.events = [Self.event(.dwell, fence: "home", ms: 1_700_000_060_000)]
        let late = own.messages(for: deadline, inside: ["home"], lastFix: Self.fix(1_700_000_000_000, speed: 0, course: 180))
        #expect(late.count == 1 && late[0].payload.contains(#""cog":180"#) && late[0].payload.contains(#""vel":0"#), "\(late.map(\.payload))")
        // Without a location stream they are not retained: no location follows the leave
        // then, so a retained one would list `home` for every later subscriber.
        #expect(messages.allSatisfy { !$0.retain } && !late[0].retain)
        let (streaming, streamingMQTT) = Self.profile(.significant)
        let streamed = OwnTracks(settings: streamingMQTT, profile: streaming).messages(for: commit, inside: ["home"]).filter { $0.kind == .location }
        #expect(!streamed.isEmpty && streamed.allSatisfy { $0.retain })
    }

    /// Fixes the engine does not use (worse than `min_accuracy`) are not published: Home
    /// Assistant decides zones from every location it gets.
    @Test func fixesWorseThanMinAccuracyAreNotPublished() {
        var (profile, mqtt) = Self.profile(.all)
        profile.sources.gnss = GNSSSourceSettings()
        profile.sources.gnss?.minAccuracyMeters = 50
        let own = OwnTracks(settings: mqtt, profile: profile)
        var commit = Monitor.Commit()
        commit.fixes = [Self.fix(1000, accuracy: 12), Self.fix(2000, accuracy: 1115), Self.fix(3000, accuracy: 475)]
        let times = own.messages(for: commit, inside: []).map { Self.tst($0.payload) }
        #expect(times == [1])
        mqtt.locations = .significant
        commit.events = [Self.event(.location, fence: nil, ms: 1000)]
        let significant = OwnTracks(settings: mqtt, profile: profile).messages(for: commit, inside: [])
        #expect(significant.map { Self.tst($0.payload) } == [1], "the last usable fix, not the 475 m one")
    }

    static func tst(_ payload: String) -> Int? {
        payload.firstMatch(of: /"tst":(-?\d+)/).flatMap { Int($0.1) }
    }

    @Test func waypointsListTheCirclesOnly() {
        let (profile, mqtt) = Self.profile(.none)
        let own = OwnTracks(settings: mqtt, profile: profile)
        let message = own.waypoints(fences: profile.fences, at: UTCTime(millisecondsSince1970: 5))
        let wtst = OwnTracks.waypointTime(fenceID: "home")
        #expect(message?.payload == #"{"_type":"waypoints","waypoints":[{"_type":"waypoint","desc":"Home","lat":47,"lon":8,"rad":100,"rid":"home","tst":\#(wtst)}]}"#)
        #expect(message?.topic == "owntracks/geomon/van/waypoints" && message?.retain == true)
        #expect(own.waypoints(fences: [profile.fences[1]], at: UTCTime(millisecondsSince1970: 5)) == nil)
    }

    @Test func theTrackerIDDefaultsToTheProfilesLastTwoCharacters() {
        var mqtt = MQTTSettings(host: "h", topic: "t")
        #expect(mqtt.effectiveTrackerID(profile: "van-42") == "42")
        #expect(mqtt.effectiveClientID(profile: "van-42") == "geomon-van-42")
        #expect(mqtt.effectivePort == 1883)
        mqtt.tls = MQTTSettings.TLS()
        #expect(mqtt.effectivePort == 8883)
        mqtt.trackerID = "vx"
        #expect(mqtt.effectiveTrackerID(profile: "van-42") == "vx")
    }
}

/// An approach event in every output: OwnTracks' extension, the event JSON, its stored form.
struct ApproachOutputTests {
    static let approach = EventRule.Approach(
        bandMeters: 1000, distanceMeters: 952.04, distanceLowerBoundMeters: 937.04, direction: .towards,
        closingSpeedMetersPerSecond: 10.004, eta: .milliseconds(95_165), etaLowerBound: .milliseconds(31_235), samples: 8, span: .seconds(65))

    static func event() -> GeoEvent {
        var event = GeoEvent(id: "a95", kind: .approach, fenceID: "home", time: UTCTime(millisecondsSince1970: 1_700_000_095_000),
                             coordinate: Coordinate(latitude: 47.1, longitude: 8.2), accuracyMeters: 5, rule: .approach(approach))
        event.approach = approach
        return event
    }

    @Test func ownTracksGetsALocationWithTheApproachFigures() {
        let (profile, mqtt) = OwnTracksTests.profile(.none)
        var commit = Monitor.Commit()
        commit.events = [Self.event()]
        let messages = OwnTracks(settings: mqtt, profile: profile).messages(for: commit, inside: [])
        #expect(messages.map(\.payload) == [#"{"_type":"location","acc":5,"geomon":{"event":"approach","rid":"home","desc":"Home","band_m":1000,"distance_m":952,"distance_min_m":937,"direction":"towards","closing_speed_mps":10,"eta_s":95.2,"eta_min_s":31.2},"lat":47.1,"lon":8.2,"t":"c","tid":"n1","tst":1700000095}"#])
    }

    @Test func theEventJSONCarriesTheFigures() throws {
        let json = EventEncoding.json(Self.event())
        #expect(json.hasSuffix(#","approach":{"band_m":1000,"distance_m":952,"distance_min_m":937,"direction":"towards","closing_speed_mps":10,"eta_s":95.2,"eta_min_s":31.2}}"#))
        // Without an ETA (not moving towards fast enough) the member is left out.
        var slow = Self.approach
        slow.eta = nil
        #expect(!EventRule.approachObject(slow).text.contains("eta_s"))
    }
}
