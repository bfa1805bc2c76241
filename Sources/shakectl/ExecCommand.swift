// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import NumberFormat
import ShakeClient
import ShakeDetection
import ShakeProtocol
import Subprocess

struct ExecCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exec",
        abstract: "Run a command on every shake: the undo handler.",
        discussion: """
            Runs CMD for each event of the chosen phase (by default every valid shake: ended), with the \
            event in its environment: SHAKE_PHASE, SHAKE_SEQ, SHAKE_TIME, SHAKE_TIMESTAMP, SHAKE_DURATION, \
            SHAKE_PEAK, SHAKE_AXIS, SHAKE_REVERSALS, SHAKE_REASON and SHAKE_DETAIL (for cancelled) and \
            SHAKE_SIMULATED. Never two at \
            once: events that come while CMD runs wait their turn (at most 8; older ones are skipped). It \
            survives daemon restarts, reconnecting and catching up on what it missed.

            Shake to undo in an X11 session (xdotool sends Ctrl+Z to the focused window):
              shakectl exec -- xdotool key ctrl+z
            """
    )

    @OptionGroup var connection: ClientOptions

    @Option(help: "The phases that run CMD, comma-separated: began, ended, cancelled.")
    var on = PhaseList(argument: "ended")!

    @Option(help: "Exit after CMD has run this many times.")
    var count: Int?

    @Argument(parsing: .postTerminator, help: "The command and its arguments, after --.")
    var command: [String] = []

    func validate() throws {
        let words = command
        guard !words.isEmpty else {
            throw ValidationError("Name a command to run after --, e.g. shakectl exec -- xdotool key ctrl+z")
        }
    }

    func run() async throws {
        let words = command
        let runner = CommandRunner(words: words)
        var runs = 0
        do {
            // Scoped, so that the connection is closed before the command exits.
            try await connection.client.withUpdates(phases: on.phases) { updates in
                for try await update in updates {
                    guard let notification = update.reportingConnection() else { continue }
                    await runner.enqueue(notification)
                    runs += 1
                    if let count, runs >= count {
                        await runner.finish()
                        return
                    }
                }
            }
        } catch {
            StandardStreams.printError("\(error)")
            throw ExitCode.failure
        }
    }
}

/// Runs the command for one event at a time, in order; holds at most `limit` waiting events.
actor CommandRunner {
    let words: [String]
    let limit = 8
    private var queue: [ServerMessage.Notification] = []
    private var running: Task<Void, Never>?

    init(words: [String]) {
        self.words = words
    }

    func enqueue(_ notification: ServerMessage.Notification) {
        queue.append(notification)
        if queue.count > limit {
            let skipped = queue.removeFirst()
            StandardStreams.printError("skipped event #\(skipped.seq): the command is still busy with earlier ones")
        }
        if running == nil { startNext() }
    }

    /// Waits until every queued event has been handled.
    func finish() async {
        while let task = running { await task.value }
    }

    private func startNext() {
        guard !queue.isEmpty else {
            running = nil
            return
        }
        let notification = queue.removeFirst()
        let words = self.words
        running = Task {
            await Self.run(words, for: notification)
            self.startNext()
        }
    }

    static func environment(for notification: ServerMessage.Notification) -> [String: String] {
        var variables = [
            "SHAKE_PHASE": notification.event.phase.rawValue,
            "SHAKE_SEQ": String(notification.seq),
            "SHAKE_TIME": DecimalText.format(notification.event.time, decimals: 3),
            "SHAKE_SIMULATED": notification.simulated ? "1" : "0",
            "SHAKE_TIMESTAMP": notification.timestamp,
        ]
        switch notification.event {
        case .began:
            break
        case .ended(let summary):
            variables["SHAKE_DURATION"] = DecimalText.format(summary.duration, decimals: 3)
            variables["SHAKE_PEAK"] = DecimalText.format(summary.peak, decimals: 2)
            variables["SHAKE_AXIS"] = summary.axis.rawValue
            variables["SHAKE_REVERSALS"] = String(summary.reversals)
        case .cancelled(let time, let began, let reason, let detail):
            variables["SHAKE_DURATION"] = DecimalText.format(time - began, decimals: 3)
            variables["SHAKE_REASON"] = reason.rawValue
            if let detail { variables["SHAKE_DETAIL"] = detail.rawValue }
        }
        return variables
    }

    /// Runs the command through `env` (which finds it on PATH, and says so when it cannot) with the event's
    /// variables added to shakectl's environment and shakectl's standard streams, and waits for it without holding
    /// a thread.
    private static func run(_ words: [String], for notification: ServerMessage.Notification) async {
        var variables: [Environment.Key: String?] = [:]
        for (key, value) in environment(for: notification) { variables[Environment.Key(stringLiteral: key)] = value }
        // shakectl's own quieting of libdispatch is not the command's.
        if ShakectlMain.quietedDispatchLog { variables["LIBDISPATCH_LOG"] = .some(nil) }
        do {
            let result = try await Subprocess.run(
                .path("/usr/bin/env"), arguments: Arguments(words), environment: .inherit.updating(variables),
                input: .currentStandardInput, output: .currentStandardOutput, error: .currentStandardError)
            switch result.terminationStatus {
            case .exited(0):
                break
            case .exited(let status):
                StandardStreams.printError("\(words[0]) exited with status \(status) for event #\(notification.seq)")
            case .signaled(let signal):
                StandardStreams.printError("\(words[0]) was ended by signal \(signal) for event #\(notification.seq)")
            }
        } catch {
            StandardStreams.printError("cannot run \(words[0]): \(error)")
        }
    }
}
