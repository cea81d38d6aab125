import Foundation

/// The handler of one `cancel(byProducingResumeData:)`, kept until the transfer has stopped.
package final class ResumeDataHandler: @unchecked Sendable {
    // @unchecked: Foundation on Linux's signature takes a handler that is not @Sendable. It is
    // called once, on the session's delegate queue, after the Mutex that held it has let it go.
    package let call: (Data?) -> Void
    package init(_ call: @escaping (Data?) -> Void) { self.call = call }
}
