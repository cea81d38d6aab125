import Crypto
import Foundation

/// The two secrets of a class: the code students type (short, read aloud or projected) and the
/// teacher's token (long, in the page's address). Both are compared in constant time.
public struct ClassCredentials: Sendable, Equatable {
    public let classCode: String
    public let teacherToken: String

    /// No 0/O or 1/I/L: a code read off a projector is typed right the first time.
    private static let codeAlphabet = Array("23456789ABCDEFGHJKMNPQRSTUVWXYZ")

    /// Eight characters: 31⁸ ≈ 850 billion codes, each guess a network round trip.
    static func newClassCode() -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<8).map { _ in codeAlphabet.randomElement(using: &generator)! })
    }

    /// 128 random bits, as hex.
    static func newTeacherToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// SHA-256 of a student key, as hex: what the store keeps instead of the key.
    static func digest(_ key: String) -> String {
        SHA256.hash(data: Data(key.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether two secrets are equal, in a time that depends on the expected one's length only:
    /// the bytes are compared through their SHA-256s, every byte of which is looked at.
    public static func same(_ given: String, _ expected: String) -> Bool {
        let left = SHA256.hash(data: Data(given.utf8)), right = SHA256.hash(data: Data(expected.utf8))
        return zip(left, right).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
