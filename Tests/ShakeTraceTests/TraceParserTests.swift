// SPDX-License-Identifier: Apache-2.0
import ShakeDetection
import ShakeTrace
import Testing

struct TraceParserTests {
    let parser = TraceParser(source: "t.csv")

    @Test func parsesRowsCommentsAndBlankLines() throws {
        let text = """
            # recorded on a bench
            time,x,y,z

            0.00,0.1,-0.2,9.81
            # a comment between rows
            0.01, 0.2 ,-0.3,9.80\r
            0.02,nan,1e1,-inf
            """
        let samples = try parser.parse(text)
        #expect(samples.count == 3)
        #expect(samples[0] == Sample(time: 0, x: 0.1, y: -0.2, z: 9.81))
        #expect(samples[1] == Sample(time: 0.01, x: 0.2, y: -0.3, z: 9.80))
        #expect(samples[2].acceleration.x.isNaN)
        #expect(samples[2].acceleration.y == 10)
        #expect(samples[2].acceleration.z == -.infinity)
    }

    @Test func aHeaderWithSpacesIsAccepted() throws {
        #expect(try parser.parse("time, x, y, z\n1,2,3,4\n").count == 1)
    }

    @Test(arguments: [
        ("time,x,y,z\n0,1,2\n", 2, "expected 4 fields (time,x,y,z), found 3"),
        ("time,x,y,z\n0,1,2,3,4\n", 2, "expected 4 fields (time,x,y,z), found more"),
        ("time,x,y,z\n0,1,2,3\n0.01,1,abc,3\n", 3, "y is not a number: 'abc'"),
        ("time,x,y,z\n0,,2,3\n", 2, "x is empty"),
        ("# c\nt,ax,ay,az\n", 2, "expected the header 'time,x,y,z': not a trace (CSV time,x,y,z)"),
        ("0,1,2,3\n", 1, "expected the header 'time,x,y,z': not a trace (CSV time,x,y,z)"),
        ("time,x,y,z\n0;1;2;3\n", 2, "time is not a number: '0;1;2;3'"),
    ])
    func malformedRowsNameTheLine(text: String, line: Int, message: String) {
        #expect(throws: TraceError(file: "t.csv", line: line, message: message)) {
            try parser.parse(text)
        }
    }

    /// `replay:/etc/shadow` in a configuration must not have the daemon log the file's first line.
    @Test func aFileThatIsNotATraceIsNotQuoted() {
        do {
            _ = try parser.parse("root:$6$secret:19000:0:99999:7:::\n")
            Issue.record("accepted")
        } catch {
            #expect(error.line == 1)
            #expect(!error.description.contains("secret") && !error.description.contains("root"), "\(error)")
        }
    }

    @Test func anEmptyFileHasNoHeader() {
        #expect(throws: TraceError(file: "t.csv", message: "empty trace: no 'time,x,y,z' header")) {
            try parser.parse("# only a comment\n\n")
        }
    }

    @Test func errorsReadAsFileLineMessage() {
        #expect(TraceError(file: "a.csv", line: 3, message: "x").description == "a.csv:3: x")
        #expect(TraceError(file: "a.csv", message: "no such file").description == "a.csv: no such file")
    }

    @Test func renderingRoundTrips() throws {
        let samples = [
            Sample(time: 0, x: 0.1234, y: -9.81, z: 0),
            Sample(time: 0.010001, x: .nan, y: .infinity, z: -.infinity),
        ]
        let text = TraceFile.render(samples, comments: ["made in a test"])
        #expect(text.hasPrefix("# made in a test\ntime,x,y,z\n0,0.1234,-9.81,0\n"))
        let back = try parser.parse(text)
        #expect(back.count == 2)
        #expect(back[0] == samples[0])
        #expect(back[1].time == samples[1].time)
        #expect(back[1].acceleration.x.isNaN && back[1].acceleration.y == .infinity)
    }

    @Test func readingAMissingFileSaysSo() {
        #expect(throws: TraceError(file: "/nonexistent/trace.csv", message: "no such file")) {
            try TraceFile.read(path: "/nonexistent/trace.csv")
        }
        #expect(throws: TraceError(file: "/tmp", message: "is a directory, not a trace file")) {
            try TraceFile.read(path: "/tmp")
        }
    }
}
