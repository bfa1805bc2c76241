// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Stops the fuzzer when an invariant does not hold.
///
/// It prints what went wrong and aborts, so that libFuzzer reports a crash and saves the input (a `crash-*`
/// file) exactly as it does for a trap.
/// - Parameters:
///   - condition: what must be true for every input.
///   - message: what was wrong, for the report.
public func require(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID,
    line: UInt = #line
) {
    guard !condition() else { return }
    fail(message(), file: file, line: line)
}

/// Stops the fuzzer unconditionally: an invariant was broken.
public func fail(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    let report = Array("INVARIANT BROKEN at \(file):\(line): \(message)\n".utf8)
    _ = report.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    abort()
}

/// The bytes libFuzzer hands to `LLVMFuzzerTestOneInput`, copied into an array.
public func fuzzInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// A short, printable rendering of bytes for invariant messages.
public func preview(_ bytes: some Collection<UInt8>, limit: Int = 120) -> String {
    var text = ""
    for byte in bytes.prefix(limit) {
        if byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") {
            text.unicodeScalars.append(Unicode.Scalar(byte))
        } else {
            let hex = String(byte, radix: 16)
            text += "\\x" + (hex.count == 1 ? "0" + hex : hex)
        }
    }
    return bytes.count > limit ? text + "..." : text
}
