// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

extension BusAccessTests {
    /// The shipped policy on a bus with the system bus's own: a forged `Shake` from another user, broadcast or sent
    /// straight to a listener, is refused by the bus; the daemon's own signals pass. The daemon runs as root here,
    /// so the copy of the policy names root where it names shaked.
    @Test func onlyTheDaemonMayEmitOnItsInterface() async throws {
        let directory = try Harness.scratch("bus-access-policy")
        let shipped = try String(
            contentsOf: Fixtures.repository.appendingPathComponent("dbus/io.github.shaked.Shake1.conf"), encoding: .utf8
        )
        let policy = "\(directory)/io.github.shaked.Shake1.conf"
        try shipped.replacingOccurrences(of: "user=\"shaked\"", with: "user=\"root\"").write(
            toFile: policy, atomically: true, encoding: .utf8)
        let bus = try PrivateBus(policy: PrivateBus.systemPolicy(including: [policy]))
        let daemon = try await Self.replayDaemon(on: bus, directory: directory)
        defer { _ = daemon.stop() }
        let listener = try Self.python(
            Self.listener, [bus.address, Self.path, Self.name], as: Self.nobody, directory: directory, name: "listener")
        defer { _ = listener.stop() }
        #expect(await listener.wait(timeout: 10) { $0.stdout.contains("ready") }, "\(listener.stderr)")
        let unique = listener.stdout.split(separator: "\n").first { $0.hasPrefix("ready ") }.map {
            String($0.dropFirst("ready ".count))
        }
        // The daemon's signals reach the listener (subscribe: everyone, the default: broadcast).
        #expect(
            await listener.wait(timeout: 15) { $0.stdout.contains("Shake from") },
            "\(listener.stdout)\n\(daemon.stderr)")

        let forger = try Self.python(
            Self.forger, [bus.address, Self.path, Self.interface, unique ?? "", "1"], as: Self.nobody,
            directory: directory, name: "forger")
        defer { _ = forger.stop() }
        #expect(await forger.wait(timeout: 10) { $0.stdout.contains("sent") }, "\(forger.stderr)")
        #expect(await listener.wait(timeout: 10) { $0.stdout.contains("marker") }, "\(listener.stdout)")
        #expect(!listener.stdout.contains("'999'"), "a forged signal got through: \(listener.stdout)")
        // Every Shake the listener heard came from the name's owner.
        let shakes = listener.stdout.split(separator: "\n").filter { $0.contains(" Shake from ") }
        #expect(!shakes.isEmpty)
        for line in shakes {
            let words = line.split(separator: " ")
            #expect(words.count > 6 && words[4] == words[6].dropLast(), "\(line)")
        }
    }
}
