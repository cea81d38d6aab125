import CLibXML2

/// An HTML document held in libxml2's tree, so that every piece of text and every attribute
/// value is escaped by libxml2 on output: nothing read from a results file can become markup.
///
/// The tree owns all its nodes; `Element` is a handle into it, valid while the tree lives.
final class HTMLTree {
    private let document: htmlDocPtr
    let root: Element
    /// An SVG file of its own, serialized as XML, rather than an HTML page.
    private let isSVG: Bool

    /// libxml2 (2.9) sets up its global state lazily and without a lock, so it is set up once,
    /// before the first tree, whichever thread renders first.
    private static let libxml2Ready: Void = xmlInitParser()

    init() {
        Self.libxml2Ready
        // Without a DTD: htmlNewDoc would declare HTML 4.0 Transitional, which puts browsers
        // into quirks mode.
        document = htmlNewDocNoDtD(nil, nil)
        xmlCreateIntSubset(document, "html", nil, nil)
        let html = xmlNewDocNode(document, nil, "html", nil)
        xmlDocSetRootElement(document, html)
        root = Element(node: html!)
        isSVG = false
    }

    /// A standalone SVG document: `root` is its `svg` element, `width` × `height` in user units.
    init(svgWidth width: Double, height: Double) {
        Self.libxml2Ready
        document = xmlNewDoc("1.0")
        let svg = xmlNewDocNode(document, nil, "svg", nil)
        xmlDocSetRootElement(document, svg)
        root = Element(node: svg!)
        isSVG = true
        for (name, value) in [("xmlns", "http://www.w3.org/2000/svg"), ("viewBox", "0 0 \(Int(width)) \(Int(height.rounded(.up)))"),
                              ("width", "\(Int(width))"), ("height", "\(Int(height.rounded(.up)))")] {
            root.set(name, value)
        }
    }

    deinit { xmlFreeDoc(document) }

    /// The whole document, `<!DOCTYPE html>` first, UTF-8.
    func serialized() -> String {
        guard let buffer = xmlAllocOutputBuffer(nil) else { return "" }
        defer { xmlOutputBufferClose(buffer) }
        if isSVG {
            xmlNodeDumpOutput(buffer, document, xmlDocGetRootElement(document), 0, 1, "UTF-8")
        } else {
            htmlDocContentDumpFormatOutput(buffer, document, "UTF-8", 1)
        }
        guard let content = xmlOutputBufferGetContent(buffer) else { return "" }
        return (isSVG ? "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" : "") + String(cString: content) + (isSVG ? "\n" : "")
    }

    struct Element {
        fileprivate let node: xmlNodePtr

        /// Appends a child element with the given attributes and, if any, text.
        @discardableResult
        func add(_ name: String, _ attributes: KeyValuePairs<String, String> = [:], text: String? = nil) -> Element {
            let child = Element(node: xmlNewDocNode(node.pointee.doc, nil, name, nil))
            xmlAddChild(node, child.node)
            for (attribute, value) in attributes { child.set(attribute, value) }
            if let text { child.append(text) }
            return child
        }

        /// Appends text, escaped on output.
        func append(_ text: String) {
            xmlAddChild(node, xmlNewDocText(node.pointee.doc, Self.printable(text)))
        }

        /// Sets an attribute; the value is escaped on output.
        func set(_ attribute: String, _ value: String) {
            xmlSetProp(node, attribute, Self.printable(value))
        }

        /// Control characters other than tab and newline are not allowed in HTML text, and a NUL
        /// would cut the C string short: a results file may hold anything.
        private static func printable(_ text: String) -> String {
            String(String.UnicodeScalarView(text.unicodeScalars.map { scalar in
                scalar.properties.generalCategory == .control && scalar != "\t" && scalar != "\n"
                    ? "\u{FFFD}" : scalar
            }))
        }
    }
}
