import Foundation

/// `value; name=token; name="quoted \"string\""`, as in Content-Type and Content-Disposition.
struct HeaderValue {
    var value: String
    /// Parameter names lowercased, in the order sent.
    var parameters: [(name: String, value: String)]

    func parameter(_ name: String) -> String? {
        parameters.first { $0.name == name }?.value
    }

    init(parsing text: String) throws(MultipartError) {
        try self.init(parsing: Array(text.utf8))
    }

    init(parsing bytes: [UInt8]) throws(MultipartError) {
        var index = 0
        func skipSpaces() {
            while index < bytes.count, bytes[index] == 32 || bytes[index] == 9 { index += 1 }
        }
        func token() -> [UInt8] {
            let start = index
            while index < bytes.count, isTokenByte(bytes[index]) || bytes[index] == UInt8(ascii: "/") { index += 1 }
            return Array(bytes[start..<index])
        }
        skipSpaces()
        let main = token()
        guard !main.isEmpty else { throw .malformed("a header value has no type before its parameters") }
        value = String(decoding: main, as: UTF8.self)
        parameters = []
        skipSpaces()
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: ";") else {
                throw .malformed("expected \";\" in \"\(String(decoding: bytes.prefix(120), as: UTF8.self))\"")
            }
            index += 1
            skipSpaces()
            if index == bytes.count { break } // a trailing ";" is harmless
            let name = String(decoding: token(), as: UTF8.self).lowercased()
            guard !name.isEmpty, index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
                throw .malformed("bad parameter in \"\(String(decoding: bytes.prefix(120), as: UTF8.self))\"")
            }
            index += 1
            var parameterValue: [UInt8] = []
            if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                index += 1
                var closed = false
                while index < bytes.count {
                    let byte = bytes[index]
                    index += 1
                    if byte == UInt8(ascii: "\\") {
                        guard index < bytes.count else { break }
                        parameterValue.append(bytes[index])
                        index += 1
                    } else if byte == UInt8(ascii: "\"") {
                        closed = true
                        break
                    } else {
                        parameterValue.append(byte)
                    }
                }
                guard closed else { throw .malformed("unterminated quoted string in parameter \(name)") }
            } else {
                parameterValue = token()
            }
            guard !parameters.contains(where: { $0.name == name }) else {
                throw .malformed("parameter \(name) appears twice")
            }
            parameters.append((name, String(decoding: parameterValue, as: UTF8.self)))
            skipSpaces()
        }
    }
}

/// RFC 9110 tchar.
func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    default:
        return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }
}

func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    var slice = bytes
    while let first = slice.first, first == 32 || first == 9 { slice = slice.dropFirst() }
    while let last = slice.last, last == 32 || last == 9 { slice = slice.dropLast() }
    return slice
}
