// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

/// The forwarder's own Debian package, built by `make deb` beside shaked's (DebianPackage.built).
@Suite(.enabled(if: DebianPackage.toolsPresent, "dpkg-buildpackage, debhelper or lintian is missing"))
struct MQTTPackageTests {
    static let contents = [
        "etc/shaked/mqtt.yaml",
        "lib/systemd/system/shaked-mqtt.service",
        "usr/bin/shaked-mqtt",
        "usr/share/doc/shaked-mqtt/changelog.gz",
        "usr/share/doc/shaked-mqtt/copyright",
        "usr/share/doc/shaked-mqtt/mqtt.md.gz",
        "usr/share/man/man5/shaked-mqtt.yaml.5.gz",
        "usr/share/man/man8/shaked-mqtt.8.gz",
    ]

    @Test func theForwardersPackageHoldsItsFilesAndStartsNothing() async throws {
        let shaked = try await DebianPackage.built.value.get()
        let folder = URL(fileURLWithPath: shaked).deletingLastPathComponent().path
        let name = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder).first {
                $0.hasPrefix("shaked-mqtt_") && $0.hasSuffix(".deb")
            })
        let package = "\(folder)/\(name)"
        #expect(try await DebianPackage.contents(package) == Self.contents)
        let depends = try await DebianPackage.field(package, "Depends")
        #expect(depends.contains("libmosquitto1"), "Depends: \(depends)")
        #expect(!depends.contains("-dev"))
        // shaked's package does not carry the forwarder.
        #expect(try await !DebianPackage.contents(shaked).contains { $0.contains("mqtt") })
        let control = try await DebianPackage.extractControl(package)
        #expect(try String(contentsOfFile: "\(control)/conffiles", encoding: .utf8) == "/etc/shaked/mqtt.yaml\n")
        // Not enabled or started at installation: the broker is configured first.
        let postinst = (try? String(contentsOfFile: "\(control)/postinst", encoding: .utf8)) ?? ""
        // (enabled again on upgrade only when it was enabled before)
        #expect(postinst.contains("if deb-systemd-helper --quiet was-enabled 'shaked-mqtt.service'; then"))
        #expect(postinst.components(separatedBy: "deb-systemd-helper enable").count == 2)
        #expect(!postinst.contains("deb-systemd-invoke"))
        let unpacked = try await DebianPackage.unpack(package)
        let unit = try String(
            contentsOfFile: "\(unpacked)/lib/systemd/system/shaked-mqtt.service", encoding: .utf8)
        #expect(unit.contains("\nExecStart=/usr/bin/shaked-mqtt --config /etc/shaked/mqtt.yaml\n"))
        let sections = try await Command.run("/usr/bin/readelf", ["-S", "-W", "\(unpacked)/usr/bin/shaked-mqtt"]).stdout
        #expect(!sections.contains(".symtab"), "shaked-mqtt is not stripped")
    }
}
