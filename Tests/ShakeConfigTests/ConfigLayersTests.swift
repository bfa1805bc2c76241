// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeConfig
import ShakeDetection
import ShakeTestSupport
import Testing

/// Drop-ins: a main file, then `*.yaml` from the vendor folder and `MAIN.d` in name order, key by key, each file
/// checked on its own terms, every problem reported.
struct ConfigLayersTests {
    /// A folder with `shaked.yaml` (when given), `shaked.yaml.d/` and `vendor/`, filled with the given files.
    static func tree(main: String?, local: [String: String] = [:], vendor: [String: String] = [:]) throws -> String {
        let root = try Scratch.directory("layers")
        for folder in ["\(root)/shaked.yaml.d", "\(root)/vendor"] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        if let main { try main.write(toFile: "\(root)/shaked.yaml", atomically: true, encoding: .utf8) }
        for (name, text) in local {
            try text.write(toFile: "\(root)/shaked.yaml.d/\(name)", atomically: true, encoding: .utf8)
        }
        for (name, text) in vendor {
            try text.write(toFile: "\(root)/vendor/\(name)", atomically: true, encoding: .utf8)
        }
        return root
    }

    static func load(_ root: String, mainMustExist: Bool = true) throws(ConfigErrors) -> LayeredConfiguration {
        let main = "\(root)/shaked.yaml"
        return try ConfigLoader.loadLayered(
            main: main, mainMustExist: mainMustExist, dropIns: ConfigLoader.dropIns(for: main, vendor: "\(root)/vendor")
        )
    }

    @Test func dropInsApplyInNameOrderKeyByKeyOverTheMainFile() throws {
        let root = try Self.tree(
            main: "sensor:\n  rate: 100\ndetector:\n  sensitivity: hard\n  threshold: 20\n",
            local: [
                "50-rate.yaml": "sensor:\n  rate: 200\n",
                "90-threshold.yaml": "# the last word\ndetector:\n  threshold: 18\n",
                "20-device.yaml": "sensor:\n  device: display\n",  // Stands in for the vendor's file of that name.
                "notes.txt": "sensor:\n  rate: nonsense\n",  // Not a .yaml file: not read.
            ],
            vendor: ["20-device.yaml": "sensor:\n  device: base\n", "10-tuning.yaml": "detector:\n  reversals: 3\n"])
        let layered = try Self.load(root)
        let configuration = layered.configuration
        #expect(configuration.sensor.rate == 200)
        #expect(configuration.sensor.device == .location(.display))
        #expect(configuration.detector.sensitivity == .hard)
        #expect(configuration.detector.overrides[.threshold] == 18)
        #expect(configuration.detector.overrides[.reversals] == 3)
        #expect(
            layered.files == [
                "\(root)/shaked.yaml", "\(root)/vendor/10-tuning.yaml", "\(root)/shaked.yaml.d/20-device.yaml",
                "\(root)/shaked.yaml.d/50-rate.yaml", "\(root)/shaked.yaml.d/90-threshold.yaml",
            ])
        #expect(layered.origins["sensor.rate"] == "\(root)/shaked.yaml.d/50-rate.yaml:2")
        #expect(layered.origins["detector.threshold"] == "\(root)/shaked.yaml.d/90-threshold.yaml:3")
        #expect(layered.origins["detector.sensitivity"] == "\(root)/shaked.yaml:4")
        #expect(layered.origins["detector.reversals"] == "\(root)/vendor/10-tuning.yaml:2")
        #expect(layered.origins["sensor.always_on"] == nil)
    }

    @Test func everyProblemIsReportedWithItsOwnFileAndLine() throws {
        let root = try Self.tree(
            main: "sensor:\n  rate: fast\nclients:\n  max_clients: 0\n",
            local: ["10-a.yaml": "detector:\n  threshold: 1000\n", "20-b.yaml": "detektor:\n  threshold: 12\n"])
        #expect {
            try Self.load(root)
        } throws: { error in
            let problems = (error as? ConfigErrors)?.errors.map(\.description) ?? []
            return problems == [
                "\(root)/shaked.yaml.d/20-b.yaml:2: detektor: unknown section; known sections: sensor, detector, socket, clients, access, logging, dbus",
                "\(root)/shaked.yaml:2: sensor.rate: expected a number, found 'fast'",
                "\(root)/shaked.yaml:4: clients.max_clients: 0 is out of range; allowed: 1...65536",
                "\(root)/shaked.yaml.d/10-a.yaml:2: detector.threshold: 1000.0 is out of range; allowed: 2.0...200.0",
            ]
        }
    }

    /// A value that is fine alone but not with another file's is blamed on the file that set it.
    @Test func aCombinationAcrossFilesNamesTheFileOfTheKey() throws {
        let root = try Self.tree(
            main: "detector:\n  too_long: 1\n", local: ["10-quiet.yaml": "detector:\n  quiet_time: 2\n"])
        #expect {
            try Self.load(root)
        } throws: { error in
            (error as? ConfigErrors)?.errors.map(\.description) == [
                "\(root)/shaked.yaml.d/10-quiet.yaml:2: detector.quiet_time: must be shorter than too_long (1.0)"
            ]
        }
    }

    @Test func withoutAMainFileTheDropInsApplyOverTheDefaults() throws {
        let root = try Self.tree(main: nil, vendor: ["10-device.yaml": "sensor:\n  rate: 50\n"])
        let layered = try Self.load(root, mainMustExist: false)
        #expect(layered.configuration.sensor.rate == 50)
        #expect(layered.files == ["\(root)/vendor/10-device.yaml"])
        #expect(throws: ConfigErrors.self) { try Self.load(root, mainMustExist: true) }
        let empty = try Self.tree(main: nil)
        let defaults = try Self.load(empty, mainMustExist: false)
        #expect(defaults.files.isEmpty && defaults.origins.isEmpty)
        #expect(defaults.configuration.sensor.rate == ShakedConfiguration().sensor.rate)
    }
}
