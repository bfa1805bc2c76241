// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import ShakeTestSupport
import SystemdSupport
import Testing

struct JournalFieldsTests {
    @Test func levelsMapToSyslogPriorities() {
        #expect(JournalFields.priority(.critical) == 2)
        #expect(JournalFields.priority(.error) == 3)
        #expect(JournalFields.priority(.warning) == 4)
        #expect(JournalFields.priority(.notice) == 5)
        #expect(JournalFields.priority(.info) == 6)
        #expect(JournalFields.priority(.debug) == 7)
        #expect(JournalFields.priority(.trace) == 7)
    }

    @Test func metadataKeysBecomeValidFieldNames() {
        #expect(JournalFields.fieldName("seq") == "SEQ")
        #expect(JournalFields.fieldName("client_uid") == "CLIENT_UID")
        #expect(JournalFields.fieldName("mount-matrix") == "MOUNT_MATRIX")
        #expect(JournalFields.fieldName("_pid") == "PID")  // Leading underscores are the journal's own.
        #expect(JournalFields.fieldName("2nd") == "F_2ND")
        #expect(JournalFields.fieldName("message") == "META_MESSAGE")  // Never overrides the entry's own.
        #expect(JournalFields.fieldName("___") == nil)
        #expect(JournalFields.fieldName(String(repeating: "a", count: 100))?.count == 64)
    }

    @Test func anEntryCarriesMessagePriorityCodeAndMetadata() {
        let fields = JournalFields.make(
            message: "shake ended", level: .info, metadata: ["phase": "ended", "seq": "12", "sensor": "iio:device0"],
            identifier: "shaked", logger: "shaked", file: "shaked/EventSink.swift", function: "emit(_:)", line: 30)
        #expect(fields.first == "MESSAGE=shake ended")
        #expect(fields.contains("PRIORITY=6"))
        #expect(fields.contains("SYSLOG_IDENTIFIER=shaked"))
        #expect(fields.contains("CODE_LINE=30"))
        #expect(fields.contains("PHASE=ended"))
        #expect(fields.contains("SEQ=12"))
        #expect(fields.contains("SENSOR=iio:device0"))
    }
}

struct JournalStreamTests {
    @Test func standardErrorIsTheJournalOnlyWhenDeviceAndInodeMatch() {
        var info = stat()
        #expect(fstat(STDERR_FILENO, &info) == 0)
        let own = "\(info.st_dev):\(info.st_ino)"
        #expect(JournalStream.isStandardErrorJournal(environment: ["JOURNAL_STREAM": own]))
        #expect(
            !JournalStream.isStandardErrorJournal(environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino + 1)"]))
        #expect(!JournalStream.isStandardErrorJournal(environment: ["JOURNAL_STREAM": "garbage"]))
        #expect(!JournalStream.isStandardErrorJournal(environment: [:]))
    }
}

/// sd_notify end to end, in process: a datagram socket stands in for systemd's.
@Suite(.serialized)
struct ServiceNotifierTests {
    /// Binds a datagram socket at a fresh path and points NOTIFY_SOCKET (and optionally WATCHDOG_*) at it.
    final class FakeManager {
        let socket: DatagramSocket

        init() throws {
            socket = try DatagramSocket(
                path: try Scratch.directory("notify") + "/notify.sock",
                timeout: 2)
            setenv("NOTIFY_SOCKET", socket.path, 1)
        }

        func receive() -> String? {
            socket.receive().map { String(decoding: $0, as: UTF8.self) }
        }

        deinit {
            unsetenv("NOTIFY_SOCKET")
            unsetenv("WATCHDOG_USEC")
            unsetenv("WATCHDOG_PID")
        }
    }

    @Test func notificationsReachTheManager() throws {
        let manager = try FakeManager()
        let notifier = ServiceNotifier()
        #expect(notifier.isActive)
        notifier.ready(status: "listening")
        #expect(manager.receive() == "READY=1\nSTATUS=listening")
        notifier.reloading()
        let reloading = manager.receive() ?? ""
        #expect(reloading.hasPrefix("RELOADING=1\nMONOTONIC_USEC="))
        notifier.watchdog()
        #expect(manager.receive() == "WATCHDOG=1")
        notifier.stopping(status: "line one\nline two")
        #expect(manager.receive() == "STOPPING=1\nSTATUS=line one line two")
    }

    @Test func theWatchdogTimeoutComesFromTheEnvironmentForThisProcessOnly() throws {
        let manager = try FakeManager()
        _ = manager
        let notifier = ServiceNotifier()
        #expect(notifier.watchdogTimeout == nil)
        setenv("WATCHDOG_USEC", "4000000", 1)
        setenv("WATCHDOG_PID", "\(getpid())", 1)
        #expect(notifier.watchdogTimeout == .seconds(4))
        setenv("WATCHDOG_PID", "1", 1)  // Meant for another process.
        #expect(notifier.watchdogTimeout == nil)
    }

    @Test func withoutNotifySocketNothingHappens() {
        unsetenv("NOTIFY_SOCKET")
        let notifier = ServiceNotifier()
        #expect(!notifier.isActive)
        notifier.ready()  // Must not trap or block.
    }
}
