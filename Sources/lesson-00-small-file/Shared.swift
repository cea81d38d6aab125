/// Lesson 00: what both variants use.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary

/// The one call, made the way `--way` chose. The body arrives all at once: there is nothing to show progress with.
func fetchInOneCall(_ request: URLRequest, _ way: SmallFileWay, _ run: LessonRun) -> (Data?, URLResponse?, (any Error)?) {
    switch way {
    case .contentsOf:
        // No response object at all: no status code, no headers, only bytes or an error.
        do {
            return (try Data(contentsOf: request.url!), nil, nil)
        } catch {
            return (nil, nil, error)
        }
    case .completionHandler:
        return run.waitForCompletion { done in
            run.sharedSession.dataTask(with: request) { data, response, error in
                done((data, response, error))
            }.resume()
        }
    }
}
