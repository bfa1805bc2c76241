// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import NumberFormat
import ShakeConfig
import ShakeDetection
import ShakeEvaluation
import ShakeTrace

#if canImport(Glibc)
    import Glibc
#endif

struct EvalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Score the detector on a labelled corpus of recordings.",
        discussion: """
            DIR holds manifest.csv (file,dataset,kind,activity,label_start,label_end,rate; kinds shake, \
            gesture, adl, fall, shake-continuous, wave) and the traces it names. Each recording runs through a fresh detector. \
            Reported: shake recall (an 'ended' within [label_start - 0.25 s, label_end + 1.5 s]), extra events \
            on shake clips, the share of other gestures that fire, false shakes and 'began' events per hour of \
            daily living (by dataset and by activity, worst first), the share of falls that fire, and latency \
            ('began' after the labelled start, 'ended' after the labelled end: median and 90th percentile), \
            continuous shaking that reports 'began' within 2 s of its start (and how the others ended), the \
            waves that fire (counted apart from the other gestures), and \
            the 'not_a_shake' cancellations by the test that failed, overall and by activity. Activity codes of \
            corpora it knows (SisFall, MobiFall and MobiAct) are explained.

            --near-misses adds, for each shake not taken (and continuous shaking not begun in time) and each \
            gesture, wave, fall or stretch of daily living that fired, how each motion the detector followed \
            was decided: the test that decided (for a shake, the one it passed by the least), the value \
            against the limit, and the margin (negative: failed by that share of the limit).

            --compare A B scores two settings side by side, each a preset (light, medium, hard) or a \
            configuration file, in one table of the trade-off: put DIR before --compare.

            Exit status: 0 after a report; 1 when the manifest or a trace cannot be read; 64 for bad options.
            """
    )

    @Argument(help: "The corpus folder (with manifest.csv).")
    var directory: String

    @OptionGroup var detector: DetectorOptions

    @Option(help: "Resample every recording to this rate (Hz) first, to test other sensors' rates.")
    var resample: Double?

    @Flag(help: "Print one JSON object instead of a table.")
    var json = false

    @Flag(
        help:
            "After the table, the near misses: for each shake not taken and each other motion that fired, which test decided each of its motions and by how much."
    )
    var nearMisses = false

    @Option(
        parsing: .upToNextOption,
        help: ArgumentHelp(
            "Compare two settings, each a preset (light, medium, hard) or a configuration file.",
            valueName: "A B"))
    var compare: [String] = []

    func validate() throws {
        guard compare.isEmpty || compare.count == 2 else {
            throw ValidationError("--compare takes two settings: presets (light, medium, hard) or configuration files")
        }
        guard compare.isEmpty || !json else { throw ValidationError("--compare prints a table; leave out --json") }
        guard !nearMisses || (compare.isEmpty && !json) else {
            throw ValidationError("--near-misses adds to the table; leave out --json and --compare")
        }
    }

    func run() async throws {
        let (settings, name) = try detector.resolve()
        if let resample, !(resample >= 1 && resample <= 10_000) {
            StandardStreams.printError("--resample must be between 1 and 10000 Hz")
            throw ExitCode(64)
        }
        let corpus: Corpus
        do {
            corpus = try Corpus.load(directory: directory)
        } catch {
            StandardStreams.printError("\(error)")
            throw ExitCode.failure
        }

        if compare.count == 2 {
            let sides = try compare.map { try Self.settings(named: $0) }
            var evaluations: [Evaluation] = []
            for side in sides {
                evaluations.append(try await Self.evaluate(corpus, settings: side, resample: resample))
            }
            print(
                Evaluation.comparison(
                    evaluations[0], evaluations[1], names: (compare[0], compare[1]),
                    title: "\(directory): \(corpus.recordings.count) recordings, \(compare[0]) against \(compare[1])"))
            return
        }
        let evaluation = try await Self.evaluate(corpus, settings: settings, resample: resample)
        if json {
            print(evaluation.json(sensitivity: name, corpus: directory))
        } else {
            let rate = resample.map { ", resampled to \(DecimalText.format($0, decimals: 1)) Hz" } ?? ""
            print(
                evaluation.report(
                    title: "\(directory): \(corpus.recordings.count) recordings, sensitivity \(name)\(rate)"))
            if nearMisses { print(evaluation.nearMissReport()) }
        }
    }
}

extension EvalCommand {
    /// Runs every recording of the corpus through a fresh detector and scores the events, as many recordings at a
    /// time as there are cores. The outcomes keep the manifest's order, so the report does not depend on which
    /// recording finished first; the first recording in that order that cannot be read is the one reported.
    static func evaluate(_ corpus: Corpus, settings: DetectorSettings, resample: Double?) async throws -> Evaluation {
        let recordings = corpus.recordings
        let progress = Progress(total: recordings.count)
        var results = [Result<Evaluation.Outcome, TraceError>?](repeating: nil, count: recordings.count)
        await withTaskGroup(of: (Int, Result<Evaluation.Outcome, TraceError>).self) { group in
            var next = recordings.startIndex
            func start() {
                guard next < recordings.endIndex else { return }
                let index = next
                next += 1
                group.addTask {
                    (index, Result { () throws(TraceError) in try score(recordings[index]) })
                }
            }
            for _ in 0..<Self.concurrency { start() }
            var done = 0
            for await (index, result) in group {
                results[index] = result
                done += 1
                progress.update(done)
                start()
            }
        }
        progress.finish()

        var outcomes: [Evaluation.Outcome] = []
        for result in results {
            switch result {
            case .success(let outcome): outcomes.append(outcome)
            case .failure(let error):
                StandardStreams.printError("\(error)")
                throw ExitCode.failure
            case nil: break
            }
        }
        return Evaluation(outcomes: outcomes)

        @Sendable func score(_ recording: Corpus.Recording) throws(TraceError) -> Evaluation.Outcome {
            var samples = try TraceFile.read(path: corpus.path(of: recording))
            if let resample {
                samples = try TraceResampler.resample(samples, to: resample, source: corpus.path(of: recording))
            }
            var detector = ShakeDetector(settings: settings)
            var events: [ShakeEvent] = []
            var decisions: [ShakeDetector.Decision] = []
            for sample in samples {
                if let event = detector.process(sample) { events.append(event) }
                if detector.counters.decided > decisions.count, let decision = detector.lastDecision {
                    decisions.append(decision)
                }
            }
            if let last = detector.interrupt() { events.append(last) }
            let duration = (samples.last?.time ?? 0) - (samples.first?.time ?? 0)
            return Evaluation.Outcome(recording: recording, events: events, duration: duration, decisions: decisions)
        }
    }

    /// How many recordings are scored at once: one per online core (scoring is CPU work, reading a trace is short).
    static var concurrency: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// A preset by name, or else a configuration file's detector settings; a bad file exits with 64.
    static func settings(named name: String) throws -> DetectorSettings {
        if let preset = DetectorSettings.Sensitivity(rawValue: name) { return DetectorSettings(sensitivity: preset) }
        do {
            return try ConfigLoader.detectorSettings(configPath: name, sensitivity: nil).settings
        } catch {
            StandardStreams.printError("\(error)")
            throw ExitCode(64)
        }
    }
}

/// A progress bar on standard error, drawn only when it is a terminal.
final class Progress: Sendable {
    let total: Int
    let isTerminal = isatty(STDERR_FILENO) != 0

    init(total: Int) {
        self.total = total
    }

    func update(_ done: Int) {
        guard isTerminal, total > 0, done % 8 == 0 || done == total else { return }
        let width = 40
        let filled = width * done / total
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
        _ = StandardStreams.write("\r[\(bar)] \(done)/\(total)", to: .standardError)
    }

    func finish() {
        guard isTerminal else { return }
        _ = StandardStreams.write("\r\u{1B}[K", to: .standardError)
    }
}
