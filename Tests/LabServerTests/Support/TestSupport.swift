import Crypto
import Foundation
import LabFixtures
import LabServer
import LabVocabulary

/// The bytes a fixture must have at `offset ..< offset + count`, straight from `Fixture.fill`.
func expectedBytes(_ fixture: Fixture, from offset: Int64 = 0, count: Int? = nil) -> [UInt8] {
    let count = count ?? Int(fixture.size - offset)
    var bytes = [UInt8](repeating: 0, count: count)
    bytes.withUnsafeMutableBytes { fixture.fill($0, from: offset) }
    return bytes
}

/// `/fixtures/<name>?size=<size>` plus optional faults, run token and extra query items.
func fixturePath(_ fixture: Fixture, faults: String? = nil, run: String? = nil, extra: String? = nil) -> String {
    var path = "/fixtures/\(fixture.name)?size=\(fixture.size)"
    if let faults { path += "&faults=\(faults)" }
    if let run { path += "&run=\(run)" }
    if let extra { path += "&\(extra)" }
    return path
}

/// SHA-256 of bytes already in memory, in one call: the server's digest is streamed and cached.
func oneShotSHA256(_ bytes: [UInt8]) -> Data { Data(SHA256.hash(data: bytes)) }

func oneShotSHA256Hex(_ bytes: [UInt8]) -> String { oneShotSHA256(bytes).map { String(format: "%02x", $0) }.joined() }

/// The Repr-Digest value computed apart from the server.
func expectedReprDigest(_ fixture: Fixture) -> String {
    "sha-256=:\(oneShotSHA256(expectedBytes(fixture)).base64EncodedString()):"
}

/// A single line of text ending in one newline.
func isOneLine(_ text: String) -> Bool {
    text.hasSuffix("\n") && text.dropLast().allSatisfy { $0 != "\n" && $0 != "\r" } && text.count > 1
}

/// Seconds taken by `body`.
func measure<T>(_ body: () throws -> T) rethrows -> (result: T, seconds: Double) {
    let start = DispatchTime.now().uptimeNanoseconds
    let result = try body()
    return (result, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
}

/// nil when the bytes are equal, otherwise a short description that does not dump megabytes
/// into the test log.
func byteDifference(_ actual: [UInt8], _ expected: [UInt8]) -> String? {
    if actual == expected { return nil }
    let firstDifference = zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        ?? min(actual.count, expected.count)
    return "got \(actual.count) bytes, expected \(expected.count); first difference at byte \(firstDifference)"
}
