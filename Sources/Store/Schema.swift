/// The store's schema, as numbered migrations. `PRAGMA user_version` holds the number of the
/// last one applied: a newer binary applies the missing ones in one transaction each; an older
/// binary refuses a file whose version it does not know, rather than misread it.
enum Schema {
    static let migrations: [String] = [
        // 1: the first layout.
        """
        CREATE TABLE fix (
            id INTEGER PRIMARY KEY,
            ts_ms INTEGER NOT NULL UNIQUE,        -- fix time (see time_source), Unix ms
            received_ms INTEGER NOT NULL,         -- system time when it arrived
            lat REAL NOT NULL,
            lon REAL NOT NULL,
            alt_hae REAL, alt_msl REAL,           -- m
            speed REAL, track REAL, climb REAL,   -- m/s, degrees true, m/s
            eph REAL, epv REAL,                   -- m, 95 % (gpsd)
            mode INTEGER NOT NULL,                -- 2 = 2D, 3 = 3D
            satellites INTEGER,
            time_source TEXT NOT NULL             -- 'gps' | 'system'
        );
        CREATE TABLE hr_sample (
            id INTEGER PRIMARY KEY,
            sensor TEXT NOT NULL,
            ts_ms INTEGER NOT NULL,
            received_ms INTEGER NOT NULL,
            bpm INTEGER NOT NULL,
            contact INTEGER NOT NULL,             -- 0 unsupported, 1 not detected, 2 detected
            energy_kj INTEGER,
            valid INTEGER NOT NULL,               -- 0: kept but excluded from aggregates
            raw BLOB NOT NULL,                    -- the 0x2A37 value as received
            UNIQUE (sensor, ts_ms)
        );
        CREATE INDEX hr_sample_by_time ON hr_sample (ts_ms);
        CREATE TABLE rr_interval (
            sample_id INTEGER NOT NULL REFERENCES hr_sample (id) ON DELETE CASCADE,
            position INTEGER NOT NULL,            -- order within the notification, oldest first
            ts_ms INTEGER NOT NULL,               -- back-dated from the notification time
            rr_1024 INTEGER NOT NULL,             -- 1/1024 s, as the sensor sent it
            PRIMARY KEY (sample_id, position)
        ) WITHOUT ROWID;
        CREATE INDEX rr_interval_by_time ON rr_interval (ts_ms);
        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY AUTOINCREMENT, -- delivery order
            seq INTEGER NOT NULL,
            topic TEXT NOT NULL,
            payload BLOB NOT NULL,
            qos INTEGER NOT NULL,
            retain INTEGER NOT NULL,
            content_type TEXT,
            expiry_s INTEGER,
            supersedable INTEGER NOT NULL,        -- a newer message on the topic may replace it
            created_ms INTEGER NOT NULL,
            rejected_reason TEXT                  -- set aside after a broker refusal (v5 reason ≥ 0x80)
        );
        CREATE INDEX outbox_pending ON outbox (id) WHERE rejected_reason IS NULL;
        CREATE INDEX outbox_supersedable ON outbox (topic) WHERE supersedable = 1;
        CREATE TABLE day_aggregate (
            date TEXT PRIMARY KEY,                -- local YYYY-MM-DD in tz
            tz TEXT NOT NULL,
            payload TEXT NOT NULL,                -- the health aggregate JSON (without seq)
            final INTEGER NOT NULL,
            updated_ms INTEGER NOT NULL,
            published_payload TEXT                -- what was last published, to republish on change only
        );
        CREATE TABLE agent_state (
            key TEXT PRIMARY KEY,
            value INTEGER NOT NULL
        );
        INSERT INTO agent_state (key, value) VALUES ('seq', 0);
        """,
        // 2: RR intervals are only read with their notification; their time index cost one more
        // page written per commit (SD-card wear) and served no query.
        """
        DROP INDEX IF EXISTS rr_interval_by_time;
        """,
        // 3: a finished day's first and last fix kept with its aggregate, so a query answers from
        // one row (and still after the raw rows are pruned). JSON text; NULL where not recorded.
        """
        ALTER TABLE day_aggregate ADD COLUMN first_fix TEXT;
        ALTER TABLE day_aggregate ADD COLUMN last_fix TEXT;
        """,
        // 4: whether a stored aggregate still covers every row of its day, so a query never
        // answers from one that late rows have overtaken. `built_*` is the row cursor it was
        // computed up to; `newest_*` the largest row id stored for the day, kept by every write
        // that adds a row to a day with an aggregate. Stale when newest > built.
        """
        ALTER TABLE day_aggregate ADD COLUMN built_fix_id INTEGER;
        ALTER TABLE day_aggregate ADD COLUMN built_hr_id INTEGER;
        ALTER TABLE day_aggregate ADD COLUMN newest_fix_id INTEGER;
        ALTER TABLE day_aggregate ADD COLUMN newest_hr_id INTEGER;
        """,
        // 5: steps (docs/steps.md). A foot pod's RSC notifications (0x2A53) as received, and a
        // chest strap's accelerometer reduced to step counts per one-minute window: the raw
        // 50 Hz stream is never stored. One table, so a day's steps are one range read.
        """
        CREATE TABLE step_record (
            id INTEGER PRIMARY KEY,
            sensor TEXT NOT NULL,
            kind TEXT NOT NULL,                   -- 'rsc' | 'acc'
            ts_ms INTEGER NOT NULL,               -- rsc: notification time; acc: the window's first sample
            received_ms INTEGER NOT NULL,
            raw BLOB,                             -- rsc: the 0x2A53 value as received
            end_ms INTEGER,                       -- acc: the window's last sample
            covered_ms INTEGER,                   -- acc: time covered by samples
            steps INTEGER,                        -- acc: steps detected in the window (estimated)
            UNIQUE (sensor, kind, ts_ms)
        );
        CREATE INDEX step_record_by_time ON step_record (ts_ms);
        ALTER TABLE day_aggregate ADD COLUMN built_step_id INTEGER;
        ALTER TABLE day_aggregate ADD COLUMN newest_step_id INTEGER;
        """,
        // 6: workouts and the shoes they are credited to (docs/contract.md, "Workouts").
        // A workout's id is a UUIDv5 of the device and its start: detected again after a
        // restart or a replay it is the same row, its `version` going up when it changed.
        // A credit is keyed by the workout: crediting it again changes nothing, assigning it
        // to another pair moves it.
        """
        CREATE TABLE workout (
            id TEXT PRIMARY KEY,
            version INTEGER NOT NULL,
            start_ms INTEGER NOT NULL,
            end_ms INTEGER,                       -- NULL while it goes on
            sport TEXT NOT NULL,
            source TEXT NOT NULL,                 -- 'auto' | 'manual'
            finished INTEGER NOT NULL,
            distance_m REAL NOT NULL,
            record TEXT NOT NULL,                 -- the published record's JSON (without seq)
            updated_ms INTEGER NOT NULL
        );
        CREATE INDEX workout_by_start ON workout (start_ms);
        CREATE TABLE gear (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            start_km REAL NOT NULL,
            limit_km REAL,
            retired INTEGER NOT NULL DEFAULT 0,
            selected INTEGER NOT NULL DEFAULT 0,
            created_ms INTEGER NOT NULL,
            warned_percent INTEGER NOT NULL DEFAULT 0   -- the highest limit event sent: 0, 80, 100
        );
        CREATE TABLE gear_credit (
            workout_id TEXT PRIMARY KEY,
            gear_id TEXT NOT NULL,
            km REAL NOT NULL,
            workout_end_ms INTEGER NOT NULL,
            credited_ms INTEGER NOT NULL
        );
        CREATE INDEX gear_credit_by_gear ON gear_credit (gear_id);
        """,
        // 7: the ingest journal (Store+Journal.swift, docs/storage.md). `journal_folded` is the
        // seq of the last window folded into the tables above. Files made by schema 7 kept the
        // ring in a table, `ingest_journal` (128 rows `slot INTEGER PRIMARY KEY, body BLOB`);
        // a new file never has it: the ring is a file of its own since schema 8.
        """
        INSERT INTO agent_state (key, value) VALUES ('journal_folded', 0);
        """,
        // 8: the ring moved to `<store>-ingest` (JournalFile.swift). The table's unfolded windows
        // are folded and the table dropped by the first start (`loadJournalIfNeeded`); the number
        // keeps a schema-7 binary, which would look for the table, from opening the file.
        """
        -- nothing to change here
        """,
        // 9: sleep features kept per 30-s epoch (Store+SleepEpochs.swift, docs/storage.md): computed
        // once when the epoch's window is complete, reused while `inputs` (a fingerprint of the
        // beats around it) matches; `check_crc` covers the row, so a damaged one is recomputed.
        """
        CREATE TABLE IF NOT EXISTS sleep_epoch (
            start_s INTEGER NOT NULL,             -- epoch start, Unix s, a multiple of 30
            sensor TEXT NOT NULL,
            inputs INTEGER NOT NULL,              -- fingerprint of the beats it was computed from
            vector BLOB NOT NULL,                 -- the feature vector (EpochFeatureVector.bytes)
            check_crc INTEGER NOT NULL,           -- CRC-32 of the other columns
            PRIMARY KEY (start_s, sensor)
        ) WITHOUT ROWID;
        """,
        // 10: published messages kept for resend requests (Store+Published.swift, docs/contract.md
        // "Resending by seq"). An acknowledged row is marked `delivered = 1` instead of deleted and
        // pruned in batches later: 0 and 1 take no bytes in a record (serial types 8 and 9), so the
        // mark rewrites the row in place, and it leaves the two partial indexes as the delete did.
        // `outbox_set_aside` lets the status count set-aside rows without reading the kept ones.
        """
        ALTER TABLE outbox ADD COLUMN delivered INTEGER NOT NULL DEFAULT 0;
        DROP INDEX IF EXISTS outbox_pending;
        CREATE INDEX outbox_pending ON outbox (id) WHERE rejected_reason IS NULL AND delivered = 0;
        DROP INDEX IF EXISTS outbox_supersedable;
        CREATE INDEX outbox_supersedable ON outbox (topic) WHERE supersedable = 1 AND delivered = 0;
        CREATE INDEX outbox_set_aside ON outbox (id) WHERE rejected_reason IS NOT NULL;
        """,
        // 11: finished nights kept with what they were classified from (Store+SleepNights.swift,
        // docs/storage.md): a stale day's query serves its night while the window's rows and the
        // settings are unchanged. Kept like the day aggregates when raw rows are pruned (a row per
        // date), and never served once its window's rows differ.
        """
        CREATE TABLE IF NOT EXISTS sleep_night (
            date TEXT PRIMARY KEY,                -- local YYYY-MM-DD credited with the night
            window_rows INTEGER NOT NULL,         -- hr_sample rows in the night's window
            window_time_sum INTEGER NOT NULL,     -- sum of their ts_ms after the window's start
            settings TEXT NOT NULL,               -- agent version, person, rules, zone it was classified with
            night TEXT NOT NULL,                  -- the night, JSON
            check_crc INTEGER NOT NULL            -- CRC-32 of the other columns
        );
        """,
        // 12: a day's heart-rate and location folds kept with what they cover (Store+DayFolds.swift,
        // docs/storage.md "Day folds"): a stale day's query folds from them instead of reading the
        // day's rows, while the day's rows and the settings are unchanged. Pruned with the raw rows.
        """
        CREATE TABLE IF NOT EXISTS day_fold (
            date TEXT PRIMARY KEY,                -- local YYYY-MM-DD
            end_ms INTEGER NOT NULL,              -- the day's end, Unix ms (retention prunes by it)
            hr_rows INTEGER NOT NULL,             -- hr_sample rows in the day when folded
            hr_time_sum INTEGER NOT NULL,         -- sum of their ts_ms after the day's start
            fix_rows INTEGER NOT NULL,            -- the same for fix
            fix_time_sum INTEGER NOT NULL,
            settings TEXT NOT NULL,               -- agent version, zone, dropout limit, zones, slot length
            fold TEXT NOT NULL,                   -- the folds, JSON
            check_crc INTEGER NOT NULL            -- CRC-32 of the other columns
        );
        """,
        // 13: replays told by what the bridge sent (docs/contract.md, "Replays"). A notification or
        // RSC record stored at its receive time (the bridge's stamp not believed) keeps a hash of
        // what the bridge sent (`origin`); a second copy has the same and is ignored. NULL, and
        // so in neither index, when the bridge's own stamp named the row.
        """
        ALTER TABLE hr_sample ADD COLUMN origin INTEGER;
        ALTER TABLE step_record ADD COLUMN origin INTEGER;
        CREATE UNIQUE INDEX hr_sample_origin ON hr_sample (sensor, origin) WHERE origin IS NOT NULL;
        CREATE UNIQUE INDEX step_record_origin ON step_record (sensor, kind, origin) WHERE origin IS NOT NULL;
        """,
    ]

    static var latestVersion: Int { migrations.count }
}
