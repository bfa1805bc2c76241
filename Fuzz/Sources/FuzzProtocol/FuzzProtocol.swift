// SPDX-License-Identifier: Apache-2.0
import FuzzSupport
import ShakeProtocol

/// libFuzzer's entry point: one input is one request line, also read as a server line and as a byte stream.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProtocol(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    checkJSON(bytes)
    checkRequest(bytes)
    checkServerMessage(bytes)
    for line in LineFramingCheck.run(bytes) {
        checkRequest(line)
    }
    return 0
}

/// A value the parser accepts renders back to text it reads as the same value; a refusal says where and why.
func checkJSON(_ bytes: [UInt8]) {
    let value: JSONValue
    do {
        value = try JSONValue.parse(bytes)
    } catch {
        require(!error.message.isEmpty, "a JSON error without a message on \(preview(bytes))")
        require(
            error.offset >= 0 && error.offset <= bytes.count,
            "JSON error offset \(error.offset) outside 0...\(bytes.count) on \(preview(bytes))")
        if let text = String(validating: bytes, as: UTF8.self) {
            require((try? JSONValue.parse(text)) == nil, "the String overload accepts \(preview(bytes))")
        }
        return
    }
    let text = CanonicalJSON.render(value)
    let again: JSONValue
    do {
        again = try JSONValue.parse(text)
    } catch {
        fail("the rendering of an accepted value is refused (\(error.message)): \(preview(text.utf8))")
    }
    require(again == value, "a value changed in a round trip: \(preview(bytes)) -> \(preview(text.utf8))")
    checkNumbers(value)
}

/// `integer` is nil or exactly the number, for every number in the value.
func checkNumbers(_ value: JSONValue) {
    switch value {
    case .number(let number):
        require(number.isFinite, "a parsed number is not finite: \(number)")
        if let integer = value.integer {
            require(Double(integer) == number, "integer \(integer) is not the number \(number)")
        }
    case .array(let items):
        items.forEach(checkNumbers)
    case .object(let fields):
        fields.values.forEach(checkNumbers)
    case .null, .bool, .string:
        break
    }
}

/// An accepted request survives its own `line`; a refused one has a code and a message, and anything that is
/// not JSON is refused as `not_json`.
func checkRequest(_ bytes: [UInt8]) {
    let request: Request
    do {
        request = try Request.parse(bytes)
    } catch {
        require(!error.code.isEmpty && !error.message.isEmpty, "a request error without code or message")
        if (try? JSONValue.parse(bytes)) == nil {
            require(error.code == "not_json", "not JSON, but refused as \(error.code): \(preview(bytes))")
        }
        return
    }
    require(Request.names.contains(request.name), "unknown request name \(request.name)")
    let line = request.line
    do {
        let again = try Request.parse(Array(line.utf8))
        require(again == request, "\(line) reads back as \(again.line)")
    } catch {
        fail("a request's own line is refused (\(error.code): \(error.message)): \(line)")
    }
}

/// A server line the client accepts renders back to valid JSON that the client reads as the same kind of
/// message.
func checkServerMessage(_ bytes: [UInt8]) {
    let message: ServerMessage
    do {
        message = try ServerMessage.parse(bytes)
    } catch {
        require(!error.message.isEmpty, "a server-line error without a message on \(preview(bytes))")
        return
    }
    let line = message.line
    do {
        let again = try ServerMessage.parse(Array(line.utf8))
        require(kind(again) == kind(message), "\(preview(bytes)) came back as \(line)")
    } catch {
        fail("the line of an accepted server message is refused (\(error.message)): \(preview(line.utf8))")
    }
}

private func kind(_ message: ServerMessage) -> String {
    switch message {
    case .hello: "hello"
    case .shake: "shake"
    case .status: "status"
    case .replayed: "replayed"
    case .dropped: "dropped"
    case .sample: "sample"
    case .error: "error"
    case .ok: "ok"
    case .key: "key"
    case .unknown(let event): "unknown:\(event)"
    }
}
