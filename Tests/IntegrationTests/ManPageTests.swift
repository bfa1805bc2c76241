// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeConfig
import ShakeTestSupport
import Testing

/// The hand-written man pages in man/: clean under both formatters' lint, Unicode units intact, and in step with
/// what the programs and the shipped configuration really have.
@Suite(.enabled(if: ManPages.formattersPresent, "mandoc or groff is not installed (make deps installs them)"))
struct ManPageTests {
    @Test(arguments: ManPages.pages)
    func lintsCleanWithMandocAndGroff(page: String) async throws {
        let path = ManPages.path(page)
        let mandoc = try await Command.run(ManPages.mandoc, ["-T", "lint", "-W", "all", path])
        #expect(
            mandoc.status == 0 && mandoc.stdout.isEmpty && mandoc.stderr.isEmpty, "\(mandoc.stdout)\(mandoc.stderr)")
        let groff = try await Command.run(
            ManPages.groff, ["-ww", "-z", "-man", "-Tutf8", path], environment: ["LC_ALL": "C.UTF-8"])
        #expect(groff.status == 0 && groff.stderr.isEmpty, "\(groff.stderr)")
    }

    @Test(arguments: ManPages.pages)
    func hasTheSectionsAManPageNeeds(page: String) async throws {
        let source = try ManPages.source(page)
        var expected = ["NAME", "SYNOPSIS", "DESCRIPTION", "FILES", "EXAMPLES", "SEE ALSO"]
        if !page.hasSuffix(".5") { expected += ["OPTIONS", "EXIT STATUS", "ENVIRONMENT"] }
        for section in expected {
            let heading = section.contains(" ") ? ".SH \"\(section)\"" : ".SH \(section)"
            #expect(
                source.contains("\n.SH \(section)\n") || source.contains("\n\(heading)\n")
                    || (page == "shakectl.1" && section == "OPTIONS" && source.contains("\n.SH COMMANDS\n")),
                "\(page) has no \(section) section")
        }
    }

    @Test func unitsSurviveRendering() async throws {
        for page in ManPages.pages {
            let rendered = try await ManPages.render(page)
            #expect(rendered.contains("m/s²"), "\(page) lost the superscript in m/s²")
        }
    }

    /// Every option `shaked --help` lists is documented, and the exit codes are the real ones.
    @Test func theDaemonPageCoversEveryOption() async throws {
        let help = try await Command.run("shaked", ["--help"]).stdout
        let page = try await ManPages.render("shaked.8")
        let options = ManPages.longOptions(in: help)
        #expect(options.count > 10)
        for option in options { #expect(page.contains(option), "shaked(8) does not mention \(option)") }
        let exitStatus = try #require(ManPages.section("EXIT STATUS", of: page))
        for code in ["0", "1", "64"] {
            #expect(exitStatus.contains("\n       \(code) "), "EXIT STATUS does not list \(code)")
        }
    }

    /// Every subcommand `shakectl --help` lists is documented, and so is every variable `exec` sets.
    @Test func theClientPageCoversEveryCommandAndVariable() async throws {
        let help = try await Command.run("shakectl", ["--help"]).stdout
        let page = try await ManPages.render("shakectl.1")
        let commands = help.split(separator: "SUBCOMMANDS:").last.map { part in
            part.split(separator: "\n").compactMap { line -> String? in
                let words = line.split(separator: " ")
                guard line.hasPrefix("  "), !line.hasPrefix("      "), let first = words.first else { return nil }
                return String(first)
            }
        }
        let listed = try #require(commands)
        #expect(listed.count >= 10)
        for command in listed where command != "See" {
            #expect(page.contains("shakectl \(command)"), "shakectl(1) has no synopsis for \(command)")
        }
        let execHelp = try await Command.run("shakectl", ["exec", "--help"]).stdout
        let variables = Set(execHelp.matches(of: /SHAKE_[A-Z]+/).map { String($0.output) })
        #expect(variables.count >= 8)
        for variable in variables { #expect(page.contains(variable), "shakectl(1) does not list \(variable)") }
    }

    /// Every key of the shipped configuration is documented in shaked.yaml(5) under its section, with the
    /// shipped default.
    @Test func theConfigurationPageMatchesTheShippedFile() async throws {
        let shipped = try String(
            contentsOf: Fixtures.repository.appendingPathComponent("config/shaked.yaml"), encoding: .utf8)
        let page = try await ManPages.render("shaked.yaml.5")
        var section = ""
        var checked = 0
        for line in shipped.split(separator: "\n", omittingEmptySubsequences: false) {
            if let match = line.wholeMatch(of: /([a-z_]+):\s*/) {
                section = String(match.1)
                #expect(page.contains("\n   \(section)\n"), "shaked.yaml(5) has no \(section) section")
                continue
            }
            // `  key: value` or `  # key: value   # range`
            guard let match = line.firstMatch(of: /^  (?:# )?([a-z_]+): ([^#]+?)\s*(?:#.*)?$/) else { continue }
            let key = String(match.1)
            var value = String(match.2)
            if value.hasPrefix("[") || value.hasPrefix("/") || key == "group" || key == "path" { value = "" }
            value = value.replacingOccurrences(of: "\"", with: "")
            let documented = page.split(separator: "\n").contains { entry in
                let words = entry.trimmingCharacters(in: .whitespaces)
                return words.hasPrefix("\(key) ") || words == key
            }
            #expect(documented, "shaked.yaml(5) does not document \(section).\(key)")
            if !value.isEmpty {
                #expect(
                    page.contains("\(key) (default \(value)") || page.contains("\(key) (\(value);")
                        || page.contains("\(key) (default \"\(value)\")"),
                    "shaked.yaml(5): \(section).\(key) should show the default \(value)")
            }
            checked += 1
        }
        #expect(checked >= 30)
    }

    /// Every key of each configuration's schema is documented in its man page under its section, with the
    /// default the program has and its range, and shown in the shipped file.
    @Test func theConfigurationPagesDocumentEveryKeyOfTheSchema() async throws {
        try await ManPages.checkSchema(
            ShakedConfiguration.schema, defaults: ShakedConfiguration(), page: "shaked.yaml.5",
            shipped: "config/shaked.yaml")
        try await ManPages.checkSchema(
            MQTTConfiguration.schema, defaults: MQTTConfiguration(), page: "shaked-mqtt.yaml.5",
            shipped: "config/mqtt.yaml")
    }
}

enum ManPages {
    static let pages = ["shaked.8", "shakectl.1", "shaked.yaml.5", "shaked-mqtt.8", "shaked-mqtt.yaml.5"]
    static let mandoc = "/usr/bin/mandoc"
    static let groff = "/usr/bin/groff"

    static var formattersPresent: Bool {
        FileManager.default.isExecutableFile(atPath: mandoc) && FileManager.default.isExecutableFile(atPath: groff)
    }

    static func path(_ page: String) -> String {
        Fixtures.repository.appendingPathComponent("man/\(page)").path
    }

    static func source(_ page: String) throws -> String {
        try String(contentsOfFile: path(page), encoding: .utf8)
    }

    /// The page as a terminal shows it, without bold or underline.
    static func render(_ page: String) async throws -> String {
        let result = try await Command.run(
            groff, ["-man", "-Tutf8", "-P", "-cbou", "-rLL=100n", path(page)], environment: ["LC_ALL": "C.UTF-8"])
        guard result.status == 0 else { throw HarnessError("groff \(page): \(result.stderr)") }
        return result.stdout
    }

    /// The `--option` names an argument parser's help lists, in order.
    static func longOptions(in help: String) -> [String] {
        help.split(separator: "\n").compactMap { line in
            line.firstMatch(of: /^  (--[a-z][a-z-]*)/).map { String($0.1) }
        }.filter { $0 != "--help" }
    }

    /// Every key of `schema` is documented in `page` under its section (with the default in `defaults` and its
    /// range of numbers, `1...10000` written `1 to 10000`) and shown in the `shipped` file. Detector parameters
    /// default to the preset's values; lists are not compared.
    static func checkSchema<Configuration>(
        _ schema: ConfigSchema<Configuration>, defaults: Configuration, page name: String, shipped path: String
    ) async throws {
        let shipped = try String(contentsOf: Fixtures.repository.appendingPathComponent(path), encoding: .utf8)
        let page = try await render(name)
        for section in schema.sections {
            let body = try #require(subsection(section, of: page), "\(name) has no \(section) section")
            for key in schema.keys(in: section) {
                let entry = body.split(separator: "\n").first { line in
                    let words = line.trimmingCharacters(in: .whitespaces)
                    return words.hasPrefix("\(key.name) ") || words == key.name
                }
                #expect(entry != nil, "\(name) does not document \(key.path)")
                if key.range.contains("..."), let entry {
                    let range = key.range.replacingOccurrences(of: "...", with: " to ")
                    #expect(entry.contains(range), "\(name): \(key.path) should give the range \(range)")
                }
                #expect(
                    shipped.contains("\n  # \(key.name): ") || shipped.contains("\n  \(key.name): "),
                    "\(path) does not show \(key.path)")
                guard key.section != "detector" || key.name == "sensitivity", let value = key.value(defaults),
                    !value.hasPrefix("[")
                else { continue }
                #expect(
                    body.contains("\(key.name) (default \(value)") || body.contains("\(key.name) (\(value);")
                        || body.contains("\(key.name) (default \"\(value)\")"),
                    "\(name): \(key.path) should show the default \(value)")
            }
        }
    }

    /// The text of one `.SS` subsection of a rendered page (indented three spaces), up to the next heading.
    static func subsection(_ name: String, of rendered: String) -> String? {
        guard let start = rendered.range(of: "\n   \(name)\n") else { return nil }
        let rest = rendered[start.upperBound...]
        let end = rest.firstMatch(of: /\n(   )?[A-Za-z][A-Za-z_ ]*\n/)?.range.lowerBound ?? rest.endIndex
        return "\n" + String(rest[..<end])
    }

    /// The text of one `.SH` section of a rendered page, up to the next heading.
    static func section(_ name: String, of rendered: String) -> String? {
        guard let start = rendered.range(of: "\n\(name)\n") else { return nil }
        let rest = rendered[start.upperBound...]
        let end = rest.firstMatch(of: /\n[A-Z][A-Z ]+\n/)?.range.lowerBound ?? rest.endIndex
        return "\n" + String(rest[..<end])
    }
}

/// What both programs say about themselves: one version, the Debian package's too, and help that reads well
/// at 80 columns.
struct VersionAndHelpTests {
    @Test(arguments: ["shaked", "shakectl", "shaked-mqtt"])
    func theVersionIsThePackagesVersion(program: String) async throws {
        let changelog = try String(
            contentsOf: Fixtures.repository.appendingPathComponent("debian/changelog"), encoding: .utf8)
        let packaged = try #require(changelog.firstMatch(of: /^shaked \(([^)]+)\)/)?.1)
        let result = try await Command.run(program, ["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == "\(packaged)\n")
    }

    @Test func theDaemonsHelpKeepsItsJSONExampleWhole() async throws {
        let help = try await Command.run("shaked", ["--help"]).stdout
        #expect(help.split(separator: "\n").allSatisfy { $0.count <= 80 })
        #expect(help.contains(#"  {"event":"shake","phase":"ended","time":3.62,"began":2.13,"duration":1.49,"#))
        #expect(help.contains("\n   \"peak\":28.02,\"axis\":\"x\",\"reversals\":11}\nTimes are seconds"))
    }

    @Test func execShowsItsDefaultAsItIsWritten() async throws {
        let help = try await Command.run("shakectl", ["exec", "--help"]).stdout
        #expect(help.contains("default: ended)"), "\(help)")
        #expect(!help.contains("PhaseList"))
    }
}
