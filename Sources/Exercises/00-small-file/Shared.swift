/// Copied from Sources/lesson-00-small-file/Shared.swift by `lab exercise reset`: what both
/// variants use. Your code is in Article.swift.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary

/// The one call, made the way `--way` chose; `completion` gets what it brought. The body arrives
/// all at once: there is nothing to show progress with.
func fetchInOneCall(_ request: URLRequest, _ way: SmallFileWay, _ run: LessonRun,
                    completion: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void) {
    switch way {
    case .contentsOf:
        // No response object at all: no status code, no headers, only bytes or an error. And the
        // calling thread waits here until the whole body is in memory: an app's main thread
        // would freeze for as long.
        let data: Data
        do {
            data = try Data(contentsOf: request.url!)
        } catch {
            return completion(nil, nil, error)
        }
        completion(data, nil, nil)
    case .completionHandler:
        run.sharedSession.dataTask(with: request, completionHandler: completion).resume()
    }
}
