// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import ShakeClient
import ShakeDetection
import ShakeProtocol
import UInput

struct KeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Have the daemon press a key chord on every shake, into your own session (Wayland and X11 alike).",
        discussion: """
            Asks the daemon to type CHORD through its virtual keyboard on each event of the chosen phases (by \
            default every valid shake: ended), and prints what became of each press. A chord is modifiers and one \
            key joined by +: ctrl+z, shift+ctrl+z, or a dedicated key such as undo (KEY_UNDO), redo, copy, paste. \
            It survives daemon restarts, reconnecting like exec and asking again.

            The daemon presses your chord only while your session is the active, unlocked one of the seat \
            (logind's seat0; an ssh login does not count): after a user switch or a screen lock nothing is typed \
            until you are back, and without logind only root's chords are typed. It presses at most 4 chords at once and 2 a second for one user; a simulated shake presses only the chords of the \
            user who asked for it. shakectl itself needs no access to /dev/uinput, and nobody is given any: the \
            daemon's own service writes it. Who may ask is access.key in the configuration (default everyone).

            uinput sends key codes, not characters: ctrl+z presses the key where Z sits on a QWERTY \
            keyboard, which is W on AZERTY. To stay layout-independent, send undo and bind KEY_UNDO (XF86Undo) \
            to what undo means in your compositor or application.

            Shake to undo:
              shakectl key ctrl+z
            """
    )

    @OptionGroup var connection: ClientOptions

    @Argument(help: "The chord to press: ctrl+z, shift+ctrl+z, undo...")
    var chord: String

    @Option(help: "The phases that press the chord, comma-separated: began, ended, cancelled.")
    var on = PhaseList(argument: "ended")!

    @Option(help: "Exit after the daemon pressed the chord this many times.")
    var count: Int?

    func validate() throws {
        do {
            _ = try KeyChord(parsing: chord)
        } catch {
            throw ValidationError("\(error)")
        }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    func run() async throws {
        let keys = try KeyChord(parsing: chord)
        let phases = on.phases.map(\.rawValue).sorted().joined(separator: ",")
        var presses = 0
        do {
            try await connection.client.withUpdates(
                phases: on.phases, key: ShakeClient.Key(chord: keys.description, phases: on.phases)
            ) { updates in
                for try await update in updates {
                    if case .connected = update {
                        StandardStreams.printError("connected; the daemon presses \(keys) on \(phases)")
                        continue
                    }
                    guard case .key(let report) = update else {
                        _ = update.reportingConnection()
                        continue
                    }
                    switch report.result {
                    case .pressed:
                        StandardStreams.printError("pressed \(report.chord) for event #\(report.seq)")
                        presses += 1
                        if let count, presses >= count { return }
                    case .away:
                        StandardStreams.printError(
                            "not pressed for event #\(report.seq): your session is not the active, unlocked one")
                    case .rateLimited:
                        StandardStreams.printError("not pressed for event #\(report.seq): too many presses at once")
                    case .failed:
                        StandardStreams.printError(
                            "the daemon could not press \(report.chord) for event #\(report.seq)")
                    }
                }
            }
        } catch {
            StandardStreams.printError("\(error)")
            throw ExitCode.failure
        }
    }
}
