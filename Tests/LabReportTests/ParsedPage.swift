import CLibXML2
import Foundation
import LabVocabulary

/// A rendered page read back by libxml2's HTML parser, as plain values: what a browser would
/// see, not what the renderer meant to write.
struct ParsedPage {
    struct Element {
        let name: String
        let attributes: [String: String]
        let children: [Element]
        /// All the text inside, as a browser shows it.
        let text: String

        subscript(attribute: String) -> String? { attributes[attribute] }

        /// This element and every element inside it, in document order.
        var all: [Element] { [self] + children.flatMap(\.all) }

        func all(_ name: String) -> [Element] { all.filter { $0.name == name } }

        func all(_ name: String, _ attribute: String, _ value: String) -> [Element] {
            all(name).filter { $0[attribute] == value }
        }

        func hasClass(_ name: String) -> Bool {
            (self["class"] ?? "").split(separator: " ").contains { $0 == name }
        }
    }

    let root: Element

    /// libxml2 (2.9) sets up its global state lazily and without a lock; tests run in parallel.
    private static let libxml2Ready: Void = xmlInitParser()

    init(_ html: String) throws {
        Self.libxml2Ready
        let bytes = Array(html.utf8)
        let options = Int32(HTML_PARSE_NOERROR.rawValue | HTML_PARSE_NOWARNING.rawValue | HTML_PARSE_NONET.rawValue)
        guard let document = htmlReadMemory(bytes, Int32(bytes.count), nil, "UTF-8", options),
              let html = xmlDocGetRootElement(document) else {
            throw ParseError()
        }
        defer { xmlFreeDoc(document) }
        root = Self.element(html)
    }

    struct ParseError: Error {}

    /// The table with this `data-table`, one array of cells per body row.
    func table(_ id: String) -> [Element] {
        root.all("table", "data-table", id).first?.all("tbody").first?.all("tr") ?? []
    }

    private static func element(_ node: xmlNodePtr) -> Element {
        var attributes: [String: String] = [:]
        var property = node.pointee.properties
        while let current = property {
            let name = String(cString: current.pointee.name)
            if let value = xmlGetProp(node, current.pointee.name) {
                attributes[name] = String(cString: value)
                lab_xmlFree(value)
            }
            property = current.pointee.next
        }
        var children: [Element] = []
        var text = ""
        var child = node.pointee.children
        while let current = child {
            switch current.pointee.type {
            case XML_ELEMENT_NODE:
                let element = element(current)
                children.append(element)
                text += element.text
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                if let content = current.pointee.content { text += String(cString: content) }
            default:
                break
            }
            child = current.pointee.next
        }
        return Element(name: String(cString: node.pointee.name), attributes: attributes, children: children, text: text)
    }
}
