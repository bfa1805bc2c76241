// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

@testable import ShakeConfig

/// Files as large as the reader takes (a megabyte), in the shapes that used to cost time growing with the square
/// of their size: one long line of items, and tens of thousands of keys in one section. Each is read whole and
/// right; `Benchmarks/config-read.sh` times them.
struct LargeFileTests {
    /// `head`, then `item` joined by `separator` while the text stays under a megabyte, then `tail`; and the count.
    func fill(_ head: String, _ item: String, _ separator: String, _ tail: String) -> (String, Int) {
        let room = NestingLimit.maxBytes - head.utf8.count - tail.utf8.count
        let count = (room + separator.utf8.count) / (item.utf8.count + separator.utf8.count)
        return (head + Array(repeating: item, count: count).joined(separator: separator) + tail, count)
    }

    @Test func aMegabyteFlowSequenceOnOneLine() throws {
        let (text, count) = fill("access:\n  subscribe: [", "user:0", ", ", "]\n")
        #expect(text.utf8.count <= NestingLimit.maxBytes && count > 100_000)
        let configuration = try ConfigLoader.parse(text, source: "big.yaml")
        #expect(configuration.access.subscribe == .accounts(Array(repeating: .user(.number(0)), count: count)))
    }

    /// Columns count characters: on a line with two-byte characters, the last item's column is its place in
    /// characters, however far along the line it is.
    @Test func columnsOnALongLineWithUTF8() throws {
        let (text, count) = fill("list: [", "é", ", ", "]\n")
        guard case .mapping(let pairs)? = try YAMLReader.read(text)?.content,
            case .sequence(let items) = pairs.first?.1.content
        else {
            Issue.record("not a mapping of a sequence")
            return
        }
        #expect(items.count == count)
        // "list: [" is 7 characters; each item and its ", " take 3.
        #expect(items.last?.mark == Mark(line: 1, column: 8 + 3 * (count - 1)))
        #expect(items.last?.scalar?.string == "é")
    }

    @Test func aMegabyteBlockSequence() throws {
        let (text, count) = fill("access:\n  subscribe:\n", "    - user:0", "\n", "\n")
        let configuration = try ConfigLoader.parse(text, source: "big.yaml")
        #expect(configuration.access.subscribe == .accounts(Array(repeating: .user(.number(0)), count: count)))
    }

    /// 80,000 keys in one section, over a main file and a drop-in that names them again: every one is checked and
    /// reported at the file and line of the value in force.
    @Test func eightyThousandKeysInOneSection() throws {
        let directory = try Scratch.directory("large-keys")
        let main = "\(directory)/shaked.yaml"
        let keys = 80_000
        try ("detector:\n" + (0..<keys).map { "  k\($0): 1\n" }.joined()).write(
            toFile: main, atomically: false, encoding: .utf8)
        let dropIn = "\(directory)/10-again.yaml"
        try ("detector:\n" + (0..<keys).reversed().map { "  k\($0): 2\n" }.joined()).write(
            toFile: dropIn, atomically: false, encoding: .utf8)
        do {
            _ = try ConfigLoader.loadLayered(main: main, dropIns: [dropIn])
            Issue.record("accepted")
        } catch {
            #expect(error.errors.count == keys)
            // The drop-in's values win, in the drop-in's order.
            #expect(error.errors.first?.description.hasPrefix("\(dropIn):2: detector.k79999: unknown key") == true)
            #expect(error.errors.last?.description.hasPrefix("\(dropIn):\(keys + 1): detector.k0: unknown key") == true)
        }
    }

    @Test func aLaterValueReplacesAnEarlierOneAndMovesToTheEnd() {
        var keys = ConfigLoader.SectionKeys()
        for name in ["a", "b", "c"] { keys.set(name, Node(name)) }
        keys.set("a", Node("again"))
        #expect(keys.pairs.map(\.0) == ["b", "c", "a"])
        #expect(keys.pairs.last?.1.scalar?.string == "again")
    }
}
