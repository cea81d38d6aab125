import Foundation
import LabPlatform
import LabVocabulary
import Synchronization

/// Where a lesson's story goes: stdout normally, stderr when stdout carries the JSON record,
/// nowhere with `--quiet`. A live progress line is drawn only on a terminal.
public final class Console: Sendable {
    private let story: Int32?
    let isTerminal: Bool
    private let progressLineShown = Mutex(false)

    package init(storyToStandardError: Bool, quiet: Bool) {
        let descriptor = storyToStandardError ? STDERR_FILENO : STDOUT_FILENO
        story = quiet ? nil : descriptor
        isTerminal = !quiet && isatty(descriptor) == 1
    }

    /// Prints one line of the story, first clearing a progress line that may be on screen.
    /// Control characters in it (a header's, a path's) are shown escaped.
    package func line(_ text: String) {
        guard let story else { return }
        progressLineShown.withLock { shown in
            Self.write((shown ? "\r\u{1B}[2K" : "") + text.printable + "\n", to: story)
            shown = false
        }
    }

    /// Redraws the progress line in place; only on a terminal.
    func progressLine(_ text: String) {
        guard let story, isTerminal else { return }
        progressLineShown.withLock { shown in
            Self.write("\r\u{1B}[2K" + text, to: story)
            shown = true
        }
    }

    /// A failure, always on stderr, one line, whatever `--quiet` says: control characters (an
    /// ESC from a server, a line break in a path) are shown escaped, and a line that would run
    /// past `longestErrorLine` characters (an argument of 100,000) is cut there.
    public static func error(_ text: String) {
        write(text.printable.shortened(to: longestErrorLine) + "\n", to: STDERR_FILENO)
    }

    public static let longestErrorLine = 2_000

    /// Machine-readable output, always on stdout.
    public static func output(_ text: String) { write(text + "\n", to: STDOUT_FILENO) }

    private static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Platform.write(descriptor, $0) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}

extension String {
    /// The text with every control character escaped (`\u{1B}`, `\n`): what came from outside
    /// (a header, a file name, a path, a resume data blob) can hold anything, and an escape
    /// sequence must not reach the terminal, nor a line break split a one-line message. Invisible
    /// format characters (a right-to-left override, which would show the rest of the line
    /// reversed) are escaped too.
    public var printable: String {
        var result = ""
        for scalar in unicodeScalars {
            if [.control, .format].contains(scalar.properties.generalCategory) {
                result += scalar.escaped(asASCII: true)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
