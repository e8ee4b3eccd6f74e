/// The schema, as an append-only list: migration `i` takes `user_version` from `i` to `i + 1`.
/// Never edit a released entry; add a new one.
enum Migrations {
    /// One step: its SQL, then, when the step converts data SQL cannot read, code in the same
    /// transaction.
    struct Step: ExpressibleByStringLiteral, Sendable {
        var sql: String
        var code: (@Sendable (Connection) throws -> Void)?
        init(stringLiteral sql: String) { self.sql = sql }
        init(_ sql: String) { self.sql = sql }
        init(_ sql: String, code: @escaping @Sendable (Connection) throws -> Void) {
            self.sql = sql
            self.code = code
        }
    }

    static let all: [Step] = [
        // 1: the initial schema.
        """
        CREATE TABLE kv (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE fence_state (
            fence_id TEXT PRIMARY KEY,
            state TEXT NOT NULL,
            since_ms INTEGER,
            since_lat REAL,
            since_lon REAL,
            since_accuracy_m REAL,
            dwell_fired INTEGER NOT NULL DEFAULT 0,
            pending_state TEXT,
            pending_count INTEGER NOT NULL DEFAULT 0,
            pending_ms INTEGER,
            pending_lat REAL,
            pending_lon REAL,
            pending_accuracy_m REAL,
            pending_s_m REAL
        ) WITHOUT ROWID;
        CREATE TABLE events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            profile TEXT NOT NULL,
            kind TEXT NOT NULL,
            fence_id TEXT,
            fence_name TEXT,
            time_ms INTEGER NOT NULL,
            lat REAL NOT NULL,
            lon REAL NOT NULL,
            accuracy_m REAL NOT NULL,
            rule TEXT NOT NULL
        );
        CREATE INDEX events_time ON events(time_ms);
        CREATE TABLE deliveries (
            id INTEGER PRIMARY KEY,
            event_id TEXT NOT NULL REFERENCES events(id),
            hook_key TEXT NOT NULL,
            argv TEXT NOT NULL,
            fence_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('pending','running','retrying','delivered','dead')),
            attempt INTEGER NOT NULL DEFAULT 0,
            next_attempt_at_ms INTEGER NOT NULL,
            last_error TEXT,
            updated_at_ms INTEGER NOT NULL,
            UNIQUE (event_id, hook_key)
        );
        CREATE INDEX deliveries_queue ON deliveries(hook_key, fence_id, seq)
            WHERE status IN ('pending','running','retrying');
        CREATE INDEX deliveries_status ON deliveries(status);
        CREATE TABLE fix_chunks (
            first_ms INTEGER PRIMARY KEY,
            last_ms INTEGER NOT NULL,
            count INTEGER NOT NULL,
            data BLOB NOT NULL
        );
        """,
        // 2: when the GNSS receiver was switched on and off, and why (pictures, status).
        """
        CREATE TABLE receiver_log (
            time_ms INTEGER NOT NULL,
            receiver_on INTEGER NOT NULL,
            reason TEXT NOT NULL
        );
        CREATE INDEX receiver_log_time ON receiver_log(time_ms);
        """,
        // 3: the MQTT outbox: messages written with the commit that made them, marked
        // published on the broker's acknowledgement, pruned by `publish.mqtt.keep`.
        """
        CREATE TABLE publications (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL CHECK (kind IN ('location','transition','waypoints')),
            topic TEXT NOT NULL,
            payload TEXT NOT NULL,
            retain INTEGER NOT NULL,
            time_ms INTEGER NOT NULL,
            event_id TEXT,
            created_at_ms INTEGER NOT NULL,
            published_at_ms INTEGER
        );
        CREATE INDEX publications_pending ON publications(seq) WHERE published_at_ms IS NULL;
        CREATE INDEX publications_time ON publications(time_ms);
        """,
        // 4: the running daemon's status as one typed row (it was a JSON text in kv).
        """
        CREATE TABLE runtime_status (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            running INTEGER NOT NULL,
            pid INTEGER NOT NULL,
            profile TEXT NOT NULL,
            mode TEXT NOT NULL,
            receiver_on INTEGER NOT NULL,
            receiver_reason TEXT NOT NULL,
            gnss_plugin TEXT, gnss_endpoint TEXT, gnss_state TEXT,
            coarse_plugin TEXT, coarse_endpoint TEXT, coarse_state TEXT, coarse_accuracy TEXT, coarse_malformed INTEGER,
            last_fix_ms INTEGER, last_fix_lat REAL, last_fix_lon REAL, last_fix_accuracy_m REAL, last_fix_source TEXT,
            inside TEXT NOT NULL,
            mqtt_broker TEXT, mqtt_topic TEXT, mqtt_state TEXT, mqtt_published INTEGER,
            uptime_s INTEGER NOT NULL,
            loop_wakeups INTEGER NOT NULL,
            hooks_running INTEGER NOT NULL,
            updated_ms INTEGER NOT NULL
        );
        DELETE FROM kv WHERE key = 'runtime_status';
        """,
        // 5: the receiver's switch in the status (sources.gnss.power).
        """
        ALTER TABLE runtime_status ADD COLUMN gnss_power_method TEXT;
        ALTER TABLE runtime_status ADD COLUMN gnss_power_state TEXT;
        ALTER TABLE runtime_status ADD COLUMN gnss_measured_on_s REAL;
        """,
        // 6: the motion sensor in the status (sources.motion).
        """
        ALTER TABLE runtime_status ADD COLUMN motion_plugin TEXT;
        ALTER TABLE runtime_status ADD COLUMN motion_state TEXT;
        ALTER TABLE runtime_status ADD COLUMN motion_since_ms INTEGER;
        """,
        // 7: fences pushed over MQTT (OwnTracks setWaypoints) and the commands received.
        """
        CREATE TABLE commands (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            received_ms INTEGER NOT NULL,
            topic TEXT NOT NULL,
            action TEXT NOT NULL,
            accepted INTEGER NOT NULL,
            summary TEXT NOT NULL
        );
        CREATE TABLE pushed_fences (
            key TEXT PRIMARY KEY,
            fence_id TEXT NOT NULL UNIQUE,
            name TEXT,
            lat REAL NOT NULL,
            lon REAL NOT NULL,
            radius_m REAL NOT NULL,
            pushed_ms INTEGER NOT NULL,
            command_seq INTEGER NOT NULL REFERENCES commands(seq)
        ) WITHOUT ROWID;
        """,
        // 8: the figures of approach events (fences' `approach:`).
        """
        ALTER TABLE events ADD COLUMN approach TEXT;
        """,
        // 9: what consumers were told of a stay, so that whatever stops a fence being watched
        // closes it (NULL `reported`: a row from before, taken as told when inside); a pushed
        // waypoint's own `tst`; why the broker refused a message (MQTT 5 PUBACK reason).
        """
        ALTER TABLE fence_state ADD COLUMN reported INTEGER;
        ALTER TABLE fence_state ADD COLUMN fence_name TEXT;
        ALTER TABLE fence_state ADD COLUMN fingerprint INTEGER;
        ALTER TABLE pushed_fences ADD COLUMN tst INTEGER;
        ALTER TABLE publications ADD COLUMN refused TEXT;
        """,
        // 10: the engine's state as typed rows (it was text in kv): one engine_state row, the
        // approach state per fence and its distance samples.
        Step("""
        CREATE TABLE engine_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            profile TEXT NOT NULL,
            usable_fix_count INTEGER NOT NULL,
            last_fix_ms INTEGER,
            location_ms INTEGER,
            location_lat REAL,
            location_lon REAL,
            implicit_state TEXT
        );
        CREATE TABLE approach_state (
            fence_id TEXT PRIMARY KEY,
            fired INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE approach_samples (
            fence_id TEXT NOT NULL,
            k INTEGER NOT NULL,
            time_ms INTEGER NOT NULL,
            distance_m REAL NOT NULL,
            PRIMARY KEY (fence_id, k)
        ) WITHOUT ROWID;
        """, code: LegacyEngineState.migrate),
        // 11: the power policy's watch on its assumptions: the bounds widened for the trip
        // (NULL: the planned ones) and the violations counted; the daemon's status shows them.
        """
        ALTER TABLE engine_state ADD COLUMN widened_speed REAL;
        ALTER TABLE engine_state ADD COLUMN widened_acceleration REAL;
        ALTER TABLE engine_state ADD COLUMN violations INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE runtime_status ADD COLUMN planning_activity TEXT;
        ALTER TABLE runtime_status ADD COLUMN planning_from TEXT;
        ALTER TABLE runtime_status ADD COLUMN planning_bounds TEXT;
        ALTER TABLE runtime_status ADD COLUMN planning_widened INTEGER;
        ALTER TABLE runtime_status ADD COLUMN planning_violations INTEGER;
        ALTER TABLE runtime_status ADD COLUMN planning_ttff_hot_s REAL;
        ALTER TABLE runtime_status ADD COLUMN planning_ttff_measured_s REAL;
        ALTER TABLE runtime_status ADD COLUMN planning_ttff_samples INTEGER;
        """,
        // 12: movement (`movement:`): the rules' state (motion, trip, stays, odometer) as text,
        // every event's figures (an exit's time inside, a trip's distance, …), the fences'
        // cooldowns and speeding in progress as text, whether a cooldown held an event back, and
        // the fences placed at run time (`geomon fences here`, the anchor watch).
        """
        ALTER TABLE engine_state ADD COLUMN movement TEXT;
        ALTER TABLE engine_state ADD COLUMN cooldowns TEXT;
        ALTER TABLE engine_state ADD COLUMN speeding TEXT;
        ALTER TABLE events ADD COLUMN figures TEXT;
        ALTER TABLE events ADD COLUMN suppressed INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE placed_fences (
            fence_id TEXT PRIMARY KEY,
            name TEXT,
            lat REAL NOT NULL,
            lon REAL NOT NULL,
            radius_m REAL NOT NULL,
            placed_ms INTEGER NOT NULL,
            placed_by TEXT NOT NULL
        );
        """,
        // 13: modes (`modes:`): the mode in effect, since when, the power supply it was chosen
        // on and the battery thresholds holding (the hysteresis), as text.
        """
        ALTER TABLE engine_state ADD COLUMN mode TEXT;
        """,
        // 14: the outbox's `clear` messages (empty retained ones that delete what a topic the
        // profile left kept retained): the table again with the kind allowed, rows, indexes
        // and the AUTOINCREMENT counter as they were; an index by topic (`unretiredTopics`).
        // The watch on assumptions: whether GNSS has shown the motion sensor's still wrong.
        // The run's status: its profile's own fence ids.
        """
        CREATE TABLE publications_new (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL CHECK (kind IN ('location','transition','waypoints','clear')),
            topic TEXT NOT NULL,
            payload TEXT NOT NULL,
            retain INTEGER NOT NULL,
            time_ms INTEGER NOT NULL,
            event_id TEXT,
            created_at_ms INTEGER NOT NULL,
            published_at_ms INTEGER,
            refused TEXT
        );
        INSERT INTO publications_new (seq, kind, topic, payload, retain, time_ms, event_id, created_at_ms, published_at_ms, refused)
            SELECT seq, kind, topic, payload, retain, time_ms, event_id, created_at_ms, published_at_ms, refused FROM publications;
        DELETE FROM sqlite_sequence WHERE name = 'publications_new';
        INSERT INTO sqlite_sequence (name, seq) SELECT 'publications_new', seq FROM sqlite_sequence WHERE name = 'publications';
        DROP TABLE publications;
        ALTER TABLE publications_new RENAME TO publications;
        CREATE INDEX publications_pending ON publications(seq) WHERE published_at_ms IS NULL;
        CREATE INDEX publications_time ON publications(time_ms);
        CREATE INDEX publications_topic ON publications(topic, kind);
        ALTER TABLE engine_state ADD COLUMN still_distrusted INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE runtime_status ADD COLUMN profile_fences TEXT;
        """,
        // 15: per topic, the enter (with an event) of each region its consumers were told the
        // device is in — since the topic's last retirement that went out, and not left since —
        // which the outbox's bound never drops (`PublicationTable.insert`); filled from the
        // transitions held.
        Step("""
        CREATE TABLE publication_regions (
            topic TEXT NOT NULL,
            rid TEXT NOT NULL,
            seq INTEGER NOT NULL,
            PRIMARY KEY (topic, rid)
        ) WITHOUT ROWID;
        \(PublicationTable.fillRegions);
        """),
        // 16: the motion sensor whose still GNSS showed wrong (its identity): a restart on
        // another sensor believes that one.
        """
        ALTER TABLE engine_state ADD COLUMN still_distrusted_sensor TEXT;
        """,
    ]

    static var latestVersion: Int { all.count }
}
