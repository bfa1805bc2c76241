// SPDX-License-Identifier: Apache-2.0
import FuzzSupport
import ShakeDetection
import ShakeTrace

private let source = "fuzz.csv"

/// libFuzzer's entry point: one input is one trace file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTrace(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    let parser = TraceParser(source: source)
    let samples: [Sample]
    do {
        samples = try parser.parse(bytes)
    } catch {
        checkError(error, bytes)
        return 0
    }
    checkStreaming(parser, bytes, samples)
    checkRowCount(bytes, samples)
    checkRoundTrip(parser, samples)
    checkResampling(samples)
    return 0
}

/// Resampling any parsed trace finishes within its limit: gaps, times that are not numbers and huge spans split
/// it instead of asking for more samples than there is memory.
private func checkResampling(_ samples: [Sample]) {
    let limit = 200_000
    for rate in [7.0, 1000] {
        do {
            let result = try TraceResampler.resample(samples, to: rate, source: source, limit: limit)
            require(result.count <= limit, "resampling gave \(result.count) samples, over the limit")
        } catch {
            require(error.message.contains("more than \(limit) samples"), "resampling failed: \(error)")
        }
    }
}

/// An error names the file, a line that exists and what is wrong.
private func checkError(_ error: TraceError, _ bytes: [UInt8]) {
    require(error.file == source, "the error names \(error.file), not \(source)")
    require(!error.message.isEmpty, "a trace error without a message on \(preview(bytes))")
    if let line = error.line {
        let lines = bytes.count(where: { $0 == UInt8(ascii: "\n") }) + 1
        require(line >= 1 && line <= lines, "line \(line) of a trace with \(lines) lines")
    }
    if let text = String(validating: bytes, as: UTF8.self) {
        require((try? TraceParser(source: source).parse(text)) == nil, "the String overload accepts it")
    }
}

/// The callback form delivers the same samples, in the same order.
private func checkStreaming(_ parser: TraceParser, _ bytes: [UInt8], _ samples: [Sample]) {
    var streamed: [Sample] = []
    do {
        try parser.parse(bytes) { streamed.append($0) }
    } catch {
        fail("the callback form refuses what the array form accepts: \(error)")
    }
    require(streamed.count == samples.count, "\(streamed.count) streamed samples, \(samples.count) parsed")
    for (one, other) in zip(streamed, samples) {
        require(same(one.time, other.time) && same(one.acceleration, other.acceleration), "samples differ")
    }
}

/// One sample per line that is neither blank, nor a comment, nor the header.
private func checkRowCount(_ bytes: [UInt8], _ samples: [Sample]) {
    let isSpace = { (byte: UInt8) in
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }
    var rows = 0
    for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
        guard let first = line.first(where: { !isSpace($0) }), first != UInt8(ascii: "#") else { continue }
        rows += 1
    }
    require(rows == samples.count + 1, "\(rows) rows with the header, \(samples.count) samples")
}

/// What `TraceFile.render` writes parses back to the same samples, rounded to the places it keeps; a finite
/// value stays finite, and `nan` and the infinities stay what they were.
private func checkRoundTrip(_ parser: TraceParser, _ samples: [Sample]) {
    let text = TraceFile.render(samples, comments: ["fuzz"])
    let again: [Sample]
    do {
        again = try parser.parse(text)
    } catch {
        fail("a rendered trace is refused: \(error)")
    }
    require(again.count == samples.count, "\(samples.count) samples rendered, \(again.count) read back")
    for (original, copy) in zip(samples, again) {
        check(original.time, copy.time, decimals: 6)
        check(original.acceleration.x, copy.acceleration.x, decimals: 4)
        check(original.acceleration.y, copy.acceleration.y, decimals: 4)
        check(original.acceleration.z, copy.acceleration.z, decimals: 4)
    }
}

private func check(_ original: Double, _ copy: Double, decimals: Int) {
    if original.isNaN || original.isInfinite {
        require(same(original, copy), "\(original) was written and read back as \(copy)")
        return
    }
    require(copy.isFinite, "the finite value \(original) was written as \(copy)")
    var step = 1.0
    for _ in 0..<decimals { step /= 10 }
    let tolerance = step * 0.51 + abs(original) * 1e-12
    require(abs(copy - original) <= tolerance, "\(original) was written and read back as \(copy)")
}

private func same(_ one: Double, _ other: Double) -> Bool {
    one.isNaN ? other.isNaN : one == other
}

private func same(_ one: Vector3, _ other: Vector3) -> Bool {
    same(one.x, other.x) && same(one.y, other.y) && same(one.z, other.z)
}
