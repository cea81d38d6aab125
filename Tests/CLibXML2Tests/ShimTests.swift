import CLibXML2
import Foundation
import LabVocabulary
import Testing

/// The libxml2 shim works from Swift 6 in a module that also imports Foundation: the ICU
/// clash is gone, `lab_xmlFree` stands in for `xmlFree`, and text is escaped on output.
@Suite(.serialized)
struct ShimTests {
    /// libxml2 sets up its global parser state lazily and not thread-safely: initialize it
    /// before first use, as its documentation asks of multithreaded programs.
    init() { xmlInitParser() }

    @Test func buildsAndSerializesAnEscapedHTMLDocument() throws {
        let document = try #require(htmlNewDoc(nil, nil))
        defer { xmlFreeDoc(document) }
        let html = xmlNewNode(nil, "html")
        xmlDocSetRootElement(document, html)
        let paragraph = xmlNewTextChild(html, nil, "p", "5 < 6 & \"bytes\" é")
        xmlNewProp(paragraph, "class", "a&b")

        let buffer = try #require(xmlAllocOutputBuffer(nil))
        htmlDocContentDumpFormatOutput(buffer, document, "UTF-8", 0)
        let bytes = xmlOutputBufferGetContent(buffer)
        let text = String(cString: try #require(bytes))
        xmlOutputBufferClose(buffer)

        #expect(text.contains("<p class=\"a&amp;b\">5 &lt; 6 &amp; \"bytes\" é</p>"), "\(text)")
    }

    @Test func freesLibxmlOwnedMemory() throws {
        let document = try #require(htmlNewDocNoDtD(nil, nil))
        defer { xmlFreeDoc(document) }
        let paragraph = xmlNewDocNode(document, nil, "p", "hi")
        xmlDocSetRootElement(document, paragraph)
        // xmlNodeGetContent returns a copy that libxml2 allocated and the caller frees.
        let content = try #require(xmlNodeGetContent(xmlDocGetRootElement(document)))
        #expect(String(cString: content) == "hi")
        lab_xmlFree(content)
    }
}
