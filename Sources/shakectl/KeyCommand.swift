import ArgumentParser
import Foundation
import ShakeClient
import ShakeDetection
import UInput

struct KeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Press a key chord on every shake, through a virtual keyboard (Wayland and X11 alike).",
        discussion: """
            Makes a uinput keyboard and types CHORD on each event of the chosen phase (by default every \
            valid shake: ended). A chord is modifiers and one key joined by +: ctrl+z, shift+ctrl+z, or a \
            dedicated key such as undo (KEY_UNDO), redo, copy, paste. It survives daemon restarts, \
            reconnecting like exec.

            uinput sends key codes, not characters: ctrl+z presses the key where Z sits on a QWERTY \
            keyboard, which is W on AZERTY. To stay layout-independent, send undo and bind KEY_UNDO (XF86Undo) \
            to what undo means in your compositor or application.

            Needs write access to /dev/uinput, which whoever holds it can use to type into any session: \
            shaked's udev rule grants it to the user of the active seat only (uaccess); see docs/install.md.

            Shake to undo:
              shakectl key ctrl+z
            """
    )

    @OptionGroup var connection: ClientOptions

    @Argument(help: "The chord to press: ctrl+z, shift+ctrl+z, undo...")
    var chord: String

    @Option(help: "The phases that press the chord, comma-separated: began, ended, cancelled.")
    var on = PhaseList(argument: "ended")!

    @Option(help: "Exit after pressing the chord this many times.")
    var count: Int?

    @Option(help: "The uinput device.")
    var uinput = "/dev/uinput"

    func validate() throws {
        do {
            _ = try KeyChord(parsing: chord)
        } catch {
            throw ValidationError("\(error)")
        }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    func run() async throws {
        let keys: KeyChord
        let keyboard: VirtualKeyboard
        do {
            keys = try KeyChord(parsing: chord)
            keyboard = try VirtualKeyboard(name: "shakectl key", chords: [keys], path: uinput)
        } catch {
            StandardStreams.printError("cannot make a virtual keyboard: \(error)")
            throw ExitCode.failure
        }
        defer { keyboard.close() }
        StandardStreams.printError(
            "virtual keyboard ready (\(keyboard.systemName ?? "uinput")): \(keys) on \(on.phases.map(\.rawValue).sorted().joined(separator: ","))"
        )
        var presses = 0
        do {
            try await connection.client.withUpdates(phases: on.phases) { updates in
                for try await update in updates {
                    guard let notification = update.reportingConnection() else { continue }
                    do {
                        try keyboard.send(keys)
                        StandardStreams.printError("pressed \(keys) for event #\(notification.seq)")
                    } catch {
                        StandardStreams.printError("cannot press \(keys): \(error)")
                    }
                    presses += 1
                    if let count, presses >= count { return }
                }
            }
        } catch {
            StandardStreams.printError("\(error)")
            throw ExitCode.failure
        }
    }
}
