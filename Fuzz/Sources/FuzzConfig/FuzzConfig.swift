// SPDX-License-Identifier: Apache-2.0
import FuzzSupport
import ShakeConfig
import ShakeDetection

private let source = "fuzz.yaml"

/// libFuzzer's entry point: one input is one configuration file. Like `ConfigLoader.load`, text that is not
/// UTF-8 is refused before parsing, so only UTF-8 inputs reach the parser.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    guard let text = String(validating: bytes, as: UTF8.self) else { return 0 }
    let configuration: ShakedConfiguration
    do {
        configuration = try ConfigLoader.parse(text, source: source)
    } catch {
        require(error.file == source, "the error names \(error.file), not \(source)")
        require(!error.message.isEmpty, "a configuration error without a message on \(preview(bytes))")
        if let line = error.line { require(line >= 1, "line \(line) in \(error)") }
        return 0
    }
    checkDetector(configuration.detector)
    checkRoundTrip(configuration.detector)
    return 0
}

/// Whatever the parser accepts gives valid detector settings: each override in its range, and the combination
/// valid.
private func checkDetector(_ section: ShakedConfiguration.DetectorSection) {
    for (parameter, value) in section.overrides {
        require(
            value.isFinite && parameter.allowed.contains(value),
            "\(parameter.rawValue): \(value) accepted outside \(parameter.allowed)")
    }
    do {
        try section.settings().validate()
    } catch {
        fail("accepted settings do not validate: \(error)")
    }
}

/// A number as the configuration takes it: Swift writes 0.00001 as `1e-05`, an exponent without a decimal point,
/// which YAML 1.1 tools read as text and the configuration therefore refuses; `1.0e-05` is read alike by all.
private func written(_ value: Double) -> String {
    let text = "\(value)"
    guard let exponent = text.firstIndex(where: { $0 == "e" || $0 == "E" }), !text[..<exponent].contains(".") else {
        return text
    }
    return text[..<exponent] + ".0" + text[exponent...]
}

/// The section written back as YAML parses to the same section.
private func checkRoundTrip(_ section: ShakedConfiguration.DetectorSection) {
    var yaml = "detector:\n  sensitivity: \(section.sensitivity.rawValue)\n"
    for parameter in DetectorSettings.Parameter.allCases {
        if let value = section.overrides[parameter] { yaml += "  \(parameter.rawValue): \(written(value))\n" }
    }
    do {
        let again = try ConfigLoader.parse(yaml, source: "round-trip.yaml")
        require(again.detector == section, "the detector section changed in a round trip:\n\(yaml)")
    } catch {
        fail("the written-back section is refused (\(error)):\n\(yaml)")
    }
}
