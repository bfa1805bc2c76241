// SPDX-License-Identifier: Apache-2.0
import ShakeConfig
import ShakeDaemon
import ShakeServer
import Testing

/// What a reload applies and what waits for a restart, from two configurations.
struct ConfigurationChangeTests {
    let started = ShakedConfiguration()

    func change(_ edit: (inout ShakedConfiguration) -> Void, socket: Bool = true) -> ConfigurationChange {
        var new = started
        edit(&new)
        let resolver = AccountResolver(user: { _ in nil }, group: { _ in nil })
        return ConfigurationChange(
            from: started, to: new, started: started,
            oldServer: socket ? ServerConfiguration(started, accounts: resolver) : nil,
            newServer: socket ? ServerConfiguration(new, accounts: resolver) : nil)
    }

    /// The server's limits when no file sets them are the `clients:` section's defaults (which the shipped
    /// config/shaked.yaml shows): a daemon started without a file must not differ from one started with the
    /// shipped file.
    @Test func theServersDefaultsAreTheConfigurationFilesDefaults() {
        let resolver = AccountResolver(user: { _ in nil }, group: { _ in nil })
        var fromFile = ServerConfiguration(ShakedConfiguration(), accounts: resolver)
        fromFile.access = ServerConfiguration().access
        #expect(fromFile == ServerConfiguration())
    }

    @Test func theSameFileChangesNothing() {
        let same = change { _ in }
        #expect(
            same == ConfigurationChange(from: started, to: started, started: started, oldServer: nil, newServer: nil))
        #expect(same.applied.isEmpty)
        #expect(same.needsRestart.isEmpty)
        #expect(same.detectorSettings == nil && same.server == nil && same.logLevel == nil && same.alwaysOn == nil)
    }

    @Test func aNewSensitivityGivesTheDetectorItsSettings() {
        let harder = change { $0.detector.sensitivity = .hard }
        #expect(harder.applied == ["detector"])
        #expect(harder.detectorSettings == ShakedConfiguration.DetectorSection().settings(sensitivity: .hard))
    }

    @Test func clientLimitsAndAccessGoToTheServer() {
        let limits = change {
            $0.clients.queueLimit = 64
            $0.access.subscribe = .accounts([.user(.number(1000))])
        }
        #expect(limits.applied == ["clients", "access"])
        #expect(limits.server?.queueLimit == 64)
        #expect(limits.server?.access.subscribe == PeerRule(users: [1000], groups: []))
        // Who may have keys pressed applies at once too (the server ends the keys it no longer allows).
        let keys = change { $0.access.key = .accounts([]) }
        #expect(keys.applied == ["access"])
        #expect(keys.server?.access.key == .rootOnly)
    }

    @Test func withoutASocketTheServersPartIsNotApplied() {
        let limits = change({ $0.clients.queueLimit = 64 }, socket: false)
        #expect(limits.server == nil)
        #expect(limits.applied.isEmpty)
    }

    @Test func logLevelAndAlwaysOnApplyNow() {
        let chatty = change {
            $0.logging.level = .debug
            $0.sensor.alwaysOn = true
        }
        #expect(chatty.logLevel == .debug)
        #expect(chatty.alwaysOn == true)
        #expect(chatty.applied == ["logging", "sensor.always_on"])
    }

    @Test func theSensorAndTheSocketWaitForARestart() {
        let moved = change {
            $0.sensor.source = .replay(path: "trace.csv")
            $0.sensor.device = .location(.display)
            $0.sensor.rate = 50
            $0.sensor.relay = .off
            $0.socket.path = "/tmp/elsewhere.sock"
        }
        #expect(moved.needsRestart == ["sensor.source", "sensor.device", "sensor.rate", "sensor.relay", "socket"])
        #expect(moved.applied.isEmpty)
    }

    @Test func aRestartIsNeededAgainstWhatTheDaemonStartedWithNotTheLastReload() {
        var reloaded = started
        reloaded.sensor.rate = 50
        // The running configuration already has the new rate; the daemon still samples at the old one.
        let again = ConfigurationChange(from: reloaded, to: reloaded, started: started, oldServer: nil, newServer: nil)
        #expect(again.needsRestart == ["sensor.rate"])
    }

    @Test func theRangeWaitsForARestartAndTheDBusModeToo() {
        let wider = change {
            $0.sensor.range = .atLeast(8)
            $0.dbus.mode = .off
            $0.sensor.followSession = false
        }
        #expect(wider.needsRestart == ["sensor.follow_session", "sensor.range", "dbus"])
        #expect(wider.applied.isEmpty)
    }
}

/// What a connected peer loses when access narrows.
struct RevocationTests {
    let peer = PeerCredentials(pid: 42, uid: 1000, gid: 1000)

    @Test func aPeerNoLongerAllowedToSubscribeIsDisconnected() {
        var policy = AccessPolicy()
        policy.subscribe = .rootOnly
        #expect(policy.revocation(for: peer, wantsSamples: false) == .disconnect)
        #expect(policy.revocation(for: peer, wantsSamples: true) == .disconnect)
    }

    @Test func aSampleStreamNoLongerAllowedStopsAndTheConnectionStays() {
        var policy = AccessPolicy()
        policy.samples = .rootOnly
        #expect(policy.revocation(for: peer, wantsSamples: true) == .stopSamples)
        #expect(policy.revocation(for: peer, wantsSamples: false) == nil)
    }

    @Test func rootLosesNothing() {
        var policy = AccessPolicy()
        policy.subscribe = PeerRule(users: [], groups: [])
        policy.samples = .rootOnly
        #expect(policy.revocation(for: PeerCredentials(pid: 1, uid: 0, gid: 0), wantsSamples: true) == nil)
    }

    @Test func aSupplementaryGroupKeepsTheRight() {
        var policy = AccessPolicy()
        policy.samples = PeerRule(users: [], groups: [27])
        let member = PeerCredentials(pid: 42, uid: 1000, gid: 1000, supplementaryGroups: [27])
        #expect(policy.revocation(for: member, wantsSamples: true) == nil)
    }
}
