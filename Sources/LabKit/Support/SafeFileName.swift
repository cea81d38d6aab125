import Foundation

/// A file name for a resource, chosen by a server (a URL's path, a `Content-Disposition`), that
/// cannot lead outside the folder it goes into: every lesson that names a file that way goes
/// through this one rule. Only the last component of `suggested` is kept (no `/`, `\` or `..`,
/// spelt any way before Foundation decoded it), no leading dot, no control or line-breaking
/// characters, and at most 200 bytes of UTF-8, whole characters only (file systems allow 255
/// bytes a name). It works on Unicode scalars, not characters: a `/` followed by a joiner is one
/// character that is not `/`, and removing the joiner afterwards would bring the `/` back.
///
/// A name that ends like one of the files the lesson keeps beside it (`sidecars`: ".resumedata",
/// ".validators") gets `.download` added, in any case (a Mac's disk ignores case), or the
/// download would replace its own sidecar. Nothing left is "download".
public func safeFileName(_ suggested: String, besideSidecars sidecars: [String]) -> String {
    let unwanted = CharacterSet.controlCharacters.union(.newlines)
    let kept = suggested.unicodeScalars.filter { !unwanted.contains($0) }
    let last = kept.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last ?? []
    var name = String(String.UnicodeScalarView(last.drop { $0 == "." }))
    while name.utf8.count > 200 { name.removeLast() }
    if sidecars.contains(where: { name.lowercased().hasSuffix($0.lowercased()) }) { name += ".download" }
    return name.isEmpty ? "download" : name
}
