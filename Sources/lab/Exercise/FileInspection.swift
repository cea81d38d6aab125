import Foundation
import LabCatalogue
import LabFixtures
import LabHarness
import LabKit
import LabServer
import LabVocabulary

/// Compares a file a program left with the fixture it should hold, byte for byte: the fixture's
/// bytes are made again, chunk by chunk, so no copy of the fixture is ever kept.
enum FileInspection {
    static func state(of file: URL?, against fixture: Fixture) -> FileState {
        guard let file, let handle = try? FileHandle(forReadingFrom: file) else { return .missing }
        defer { try? handle.close() }
        let size = (try? handle.seekToEnd()).map(Int64.init) ?? 0
        try? handle.seek(toOffset: 0)
        let compared = min(size, fixture.size)
        let prefixIsRight = startMatches(handle, fixture, count: compared)
        if size == fixture.size { return prefixIsRight ? .right : .rightSizeWrongBytes }
        if size > fixture.size { return .longer(bytes: size) }
        if prefixIsRight { return .startOfTheFile(bytes: size) }
        if size <= 4096, let text = try? String(contentsOf: file, encoding: .utf8), ScriptedStatus.isPage(text) {
            return .errorPage
        }
        return .shorter(bytes: size)
    }

    private static func startMatches(_ handle: FileHandle, _ fixture: Fixture, count: Int64) -> Bool {
        let chunk = 1 << 20
        var expected = [UInt8](repeating: 0, count: chunk)
        var offset: Int64 = 0
        while offset < count {
            let length = Int(min(Int64(chunk), count - offset))
            guard let actual = try? handle.read(upToCount: length), actual.count == length else { return false }
            expected.withUnsafeMutableBytes { fixture.fill(UnsafeMutableRawBufferPointer(rebasing: $0[..<length]), from: offset) }
            // memcmp, not elementsEqual: a debug build compares byte by byte otherwise, 10 s for 96 MiB.
            let same = actual.withUnsafeBytes { actualBytes in
                expected.withUnsafeBytes { memcmp(actualBytes.baseAddress!, $0.baseAddress!, length) == 0 }
            }
            if !same { return false }
            offset += Int64(length)
        }
        return true
    }
}

extension FileState {
    /// "1,677,721 bytes too long (5,872,025 for 4,194,304)".
    func described(size: Int64) -> String {
        switch self {
        case .right: "the file is right"
        case .missing: "no file"
        case .startOfTheFile(let bytes): "\(ByteFormat.grouped(bytes)) of \(ByteFormat.grouped(size)) bytes: the start of the file, nothing after it"
        case .longer(let bytes):
            "\(ByteFormat.grouped(bytes - size)) bytes too long (\(ByteFormat.grouped(bytes)) for \(ByteFormat.grouped(size)))"
        case .shorter(let bytes):
            "\(ByteFormat.grouped(size - bytes)) bytes too short, with wrong bytes (\(ByteFormat.grouped(bytes)) for \(ByteFormat.grouped(size)))"
        case .rightSizeWrongBytes: "right size, wrong bytes"
        case .errorPage: "the server's error page saved as the file"
        }
    }
}
