// SPDX-License-Identifier: Apache-2.0
import ShakeClient
import ShakeProtocol

extension ShakeClient.Update {
    /// Says on standard error what a change of the connection means, so that a user unit's journal tells why
    /// nothing happens (`exec` and `key` report them alike).
    /// - Returns: the shake event, when this update is one.
    func reportingConnection() -> ServerMessage.Notification? {
        switch self {
        case .shake(let notification): return notification
        case .waiting(let reason): StandardStreams.printError("waiting for the daemon: \(reason)")
        case .disconnected: StandardStreams.printError("the daemon went away; reconnecting")
        case .connected: StandardStreams.printError("connected")
        case .dropped(let count): StandardStreams.printError("the daemon dropped \(count) events")
        case .key: break
        }
        return nil
    }
}
