// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeDetection
import ShakeTestSupport
import ShakeTrace
import Testing

/// Reading traces as streams: the same samples as a whole-buffer parse whatever the chunking, FIFOs and standard
/// input alike, and bounded cost on input that is not a trace or is larger than memory should hold.
struct TraceStreamingTests {
    static func temporary(_ name: String, _ contents: String) throws -> String {
        let directory = URL(fileURLWithPath: try Scratch.directory("trace-stream"))
        let path = directory.appendingPathComponent(name).path
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A trace of `count` rows, with comments, blank lines and CRLF here and there.
    static func text(rows count: Int) -> String {
        var text = "# a comment\ntime,x,y,z\n"
        for index in 0..<count {
            text += "\(Double(index) * 0.01),\(index % 7),-\(index % 3).5,9.81\(index % 5 == 0 ? "\r" : "")\n"
            if index % 1000 == 999 { text += "\n# every thousand rows\n" }
        }
        return text
    }

    /// Rows long enough to cross the 64 KiB reads many times, so lines are split between chunks.
    @Test func aStreamedFileGivesTheSameSamplesAsAWholeParse() throws {
        let text = Self.text(rows: 20_000)
        let path = try Self.temporary("long.csv", text)
        let whole = try TraceParser(source: path).parse(text)
        var streamed: [Sample] = []
        try TraceFile.forEachSample(path: path) { streamed.append($0) }
        #expect(whole.count == 20_000)
        #expect(streamed == whole)
        #expect(try TraceFile.read(path: path) == whole)
    }

    @Test func aLastLineWithoutNewlineCounts() throws {
        let path = try Self.temporary("no-newline.csv", "time,x,y,z\n0,1,2,3\n0.01,4,5,6")
        #expect(try TraceFile.read(path: path).map(\.acceleration.x) == [1, 4])
    }

    @Test func aFIFOIsReadLikeAFile() throws {
        let text = Self.text(rows: 5_000)
        let directory = URL(fileURLWithPath: try Scratch.directory("trace-fifo"))
        let fifo = directory.appendingPathComponent("trace.fifo").path
        unlink(fifo)
        #expect(mkfifo(fifo, 0o600) == 0)
        let writer = Thread {
            let handle = FileHandle(forWritingAtPath: fifo)
            handle?.write(Data(text.utf8))
            try? handle?.close()
        }
        writer.start()
        let samples = try TraceFile.read(path: fifo)
        #expect(samples == (try TraceParser(source: fifo).parse(text)))
    }

    /// /dev/zero has no newline at all: the first line is too long, found after one read, not after memory runs
    /// out.
    @Test func inputThatIsNotATraceStopsAtTheFirstLongLine() {
        #expect(
            throws: TraceError(
                file: "/dev/zero", line: 1, message: "longer than 4096 bytes: not a trace (CSV time,x,y,z)")
        ) {
            try TraceFile.forEachSample(path: "/dev/zero") { _ in }
        }
        let long = "time,x,y,z\n0,1,2,3\n# " + String(repeating: "x", count: 5000) + "\n"
        #expect(throws: TraceError(file: "t", line: 3, message: "longer than 4096 bytes: not a trace (CSV time,x,y,z)"))
        {
            try TraceParser(source: "t").parse(long)
        }
    }

    @Test func aTraceLongerThanTheLimitSaysSplitIt() throws {
        let path = try Self.temporary("limit.csv", Self.text(rows: 100))
        #expect(throws: TraceError(file: path, message: "holds more than 99 samples; split it into shorter traces")) {
            try TraceFile.read(path: path, limit: 99)
        }
        #expect(try TraceFile.read(path: path, limit: 100).count == 100)
    }

    @Test func anUnreadableFileSaysWhy() throws {
        let path = try Self.temporary("unreadable.csv", "time,x,y,z\n")
        chmod(path, 0)
        defer { chmod(path, 0o600) }
        // Root reads anything: the check only means something for other users.
        if getuid() != 0 {
            #expect(throws: TraceError(file: path, message: "cannot be read: permission denied")) {
                try TraceFile.read(path: path)
            }
        }
        #expect(throws: TraceError(file: "/proc/self/mem", message: "cannot be read: Input/output error")) {
            try TraceFile.read(path: "/proc/self/mem")
        }
    }
}

/// Resampling with gaps, times that are not numbers and huge spans: bounded by the samples there are.
struct TraceResamplerTests {
    static func still(_ times: [Double]) -> [Sample] {
        times.map { Sample(time: $0, x: 0, y: 0, z: 9.81) }
    }

    @Test func upsamplingInterpolatesWithinAStretch() throws {
        let samples = [Sample(time: 0, x: 0, y: 0, z: 0), Sample(time: 0.1, x: 10, y: 0, z: 0)]
        let result = try TraceResampler.resample(samples, to: 50, source: "t")
        #expect(result.map(\.time).count == 6)
        #expect(abs(result[3].acceleration.x - 6) < 1e-9)
    }

    @Test func downsamplingAveragesBlocks() throws {
        let samples = (0..<100).map { Sample(time: Double($0) * 0.01, x: Double($0 % 2), y: 0, z: 9.81) }
        let result = try TraceResampler.resample(samples, to: 25, source: "t")
        #expect(result.count == 25)
        #expect(result.allSatisfy { abs($0.acceleration.x - 0.5) < 1e-9 })
    }

    /// A gap of 1e13 s is kept as a gap: four samples in, a few hundred out, where interpolating across it would
    /// ask for 1e17.
    @Test func aHugeGapStaysAGap() throws {
        let result = try TraceResampler.resample(Self.still([0, 0.01, 1e13, 1e13 + 0.01]), to: 10_000, source: "t")
        // 101 samples in the first hundredth of a second; about as many in the second (at 1e13 s a double
        // steps by 0.002 s, so the times there are coarser).
        #expect(result.filter { $0.time < 1 }.count == 101)
        #expect(result.count < 300)
        #expect(result.first?.time == 0 && result.last?.time == 1e13 + 0.01)
    }

    @Test func timesThatAreNotNumbersOrRunBackwardsSplitTheTrace() throws {
        let result = try TraceResampler.resample(
            Self.still([0, 0.1, .infinity, .nan, 5, 4, 4.1]), to: 20, source: "t")
        #expect(result.contains { $0.time == .infinity })
        #expect(result.filter { $0.time.isNaN }.count == 1)
        #expect(result.count == 3 + 1 + 1 + 1 + 3)
    }

    @Test func aResultOverTheLimitIsAnError() {
        #expect(throws: TraceError(file: "t", message: "resampled, it would hold more than 1000 samples; split it")) {
            try TraceResampler.resample(Self.still([0, 0.5, 1]), to: 10_000, source: "t", limit: 1000)
        }
    }
}
