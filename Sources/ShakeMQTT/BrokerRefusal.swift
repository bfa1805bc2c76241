// SPDX-License-Identifier: Apache-2.0
/// A broker that answered and said no, or a TLS handshake that failed, with what to do about it, pure: from the
/// CONNACK code, the library's result and what it logged.
public enum BrokerRefusal: Sendable, Hashable, CustomStringConvertible {
    /// CONNACK 4 (3.1.1) or 134 (5): the user name or password is wrong.
    case badCredentials
    /// CONNACK 5 or 135: the broker does not allow this client: mosquitto says so for a wrong password too.
    case notAuthorized
    /// CONNACK 2 or 133: the broker does not accept the client id.
    case identifierRejected
    /// CONNACK 1: the broker does not speak MQTT 3.1.1.
    case protocolVersion
    /// CONNACK 3 or 136: the broker is up but not serving.
    case unavailable
    /// Another CONNACK code.
    case other(code: Int32)
    /// The TLS handshake failed (certificate not trusted, wrong host name, a plain-text port).
    case tls(String)

    /// libmosquitto's `MOSQ_ERR_TLS`.
    static let tlsResult: Int32 = 8

    /// - Parameters:
    ///   - connack: the CONNACK's code when one arrived.
    ///   - result: the library's last result (`MOSQ_ERR_*`).
    ///   - tls: whether TLS is in use.
    ///   - logged: the last error or warning the library logged.
    public static func classify(connack: Int32?, result: Int32, tls: Bool, logged: String?) -> BrokerRefusal? {
        if let connack, connack != 0 {
            switch connack {
            case 1: return .protocolVersion
            case 2, 133: return .identifierRejected
            case 3, 136: return .unavailable
            case 4, 134: return .badCredentials
            case 5, 135: return .notAuthorized
            default: return .other(code: connack)
            }
        }
        if result == tlsResult || (tls && (logged?.hasPrefix("OpenSSL") ?? false)) {
            return .tls(logged ?? "TLS error")
        }
        return nil
    }

    /// What the administrator should check.
    public var advice: String {
        switch self {
        case .badCredentials:
            "check broker.username and the password (broker.password_file or the credential broker.password_credential)"
        case .notAuthorized:
            "check broker.username and the password (broker.password_file or the credential broker.password_credential), "
                + "and that the broker lets this user connect"
        case .identifierRejected: "choose another broker.client_id (it must be unique on the broker)"
        case .protocolVersion: "the broker does not speak MQTT 3.1.1; upgrade it"
        case .unavailable: "the broker refuses service for now; see its log"
        case .other: "see the broker's log"
        case .tls:
            "check that broker.ca_file holds the CA that signed the broker's certificate, that the certificate names the "
                + "host in broker.uri, and that the port speaks TLS (mqtts://)"
        }
    }

    public var description: String {
        switch self {
        case .badCredentials: "bad user name or password"
        case .notAuthorized: "not authorised (a wrong user name or password, or not allowed)"
        case .identifierRejected: "client id rejected"
        case .protocolVersion: "protocol version not accepted"
        case .unavailable: "broker unavailable"
        case .other(let code): "refused with code \(code)"
        case .tls(let message): "TLS handshake failed: \(message)"
        }
    }
}
