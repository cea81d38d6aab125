//: # Lesson 06: a background thread and its run loop
//:
//: A connection reports back the way a timer does: through the run loop it is scheduled in, and
//: only while that run loop runs in one of the connection's modes. So timers are enough to see
//: every rule of the lesson, without a server. Three experiments:
//: 1. a thread that never runs its run loop, and one that does;
//: 2. run-loop modes: `.default` against `.common` while the loop runs in a mode of its own;
//: 3. GCD workers parked in their run loops, and what that costs the global queue.
import CoreFoundation
import Foundation

/// What the experiments saw. Timer blocks and thread bodies must be `@Sendable`, and they run on
/// other threads, so the list is guarded by a lock (hence `@unchecked Sendable`).
final class Events: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ event: String) { lock.lock(); list.append(event); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return list }
}

/// A timer that fires once, `seconds` from now, when added to a run loop. Not
/// `Timer(timeInterval:repeats:block:)`: in Foundation on Linux that one fires at once.
func oneShot(after seconds: TimeInterval, _ block: @escaping @Sendable (Timer) -> Void) -> Timer {
    Timer(fire: Date(timeIntervalSinceNow: seconds), interval: 0, repeats: false, block: block)
}

//: ## 1. A timer on a thread that never runs its run loop never fires
func neverRunsItsRunLoop() -> [String] {
    let events = Events()
    let done = DispatchSemaphore(value: 0)
    Thread {
        let timer = oneShot(after: 0.1) { _ in events.add("fired") }
        RunLoop.current.add(timer, forMode: .default)
        Thread.sleep(forTimeInterval: 0.5)  // other work; the run loop never runs
        timer.invalidate()
        done.signal()
    }.start()
    done.wait()
    return events.all
}
print("never runs its run loop:", neverRunsItsRunLoop())  // []

//: The same thread running its run loop: the timer fires there, and `run()` returns when the
//: loop has nothing left (a non-repeating timer is gone once it has fired), so the thread ends.
func runsItsRunLoop() -> [String] {
    let events = Events()
    let done = DispatchSemaphore(value: 0)
    Thread {
        let timer = oneShot(after: 0.1) { _ in events.add("fired") }
        RunLoop.current.add(timer, forMode: .default)
        RunLoop.current.run()
        events.add("run() returned")
        done.signal()
    }.start()
    done.wait()
    return events.all
}
print("runs its run loop:", runsItsRunLoop())  // ["fired", "run() returned"]

//: ## 2. Modes
//: A mode of our own stands in for the main thread's tracking mode while a finger drags a scroll
//: view. UIKit makes its tracking mode one of the common modes; Core Foundation does it here.
let tracking = RunLoop.Mode("playground.tracking")

func addToCommonModes(_ mode: RunLoop.Mode) {
    #if canImport(Darwin)
    CFRunLoopAddCommonMode(CFRunLoopGetCurrent(), CFRunLoopMode(rawValue: mode.rawValue as CFString))
    #else
    CFRunLoopAddCommonMode(CFRunLoopGetCurrent(), CFStringCreateWithCString(nil, mode.rawValue, CFStringBuiltInEncodings.UTF8.rawValue))
    #endif
}

func modes(makeTrackingCommon: Bool) -> (whileTracking: [String], afterwards: [String]) {
    let events = Events()
    let result = Events()
    let done = DispatchSemaphore(value: 0)
    Thread {
        if makeTrackingCommon { addToCommonModes(tracking) }
        let inDefault = oneShot(after: 0.1) { _ in events.add("default") }
        let inCommon = oneShot(after: 0.1) { _ in events.add("common") }
        RunLoop.current.add(inDefault, forMode: .default)
        RunLoop.current.add(inCommon, forMode: .common)
        // Something must be scheduled in the tracking mode, or running in it returns at once.
        let touches = Timer(fire: .distantFuture, interval: 0, repeats: false) { _ in }
        RunLoop.current.add(touches, forMode: tracking)
        let fingerLifts = Date(timeIntervalSinceNow: 0.5)
        while Date() < fingerLifts { _ = RunLoop.current.run(mode: tracking, before: fingerLifts) }
        touches.invalidate()
        result.add(events.all.joined(separator: ","))
        _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.3))
        result.add(events.all.joined(separator: ","))
        done.signal()
    }.start()
    done.wait()
    let seen = result.all.map { $0.split(separator: ",").map(String.init) }
    return (seen[0], seen[1])
}
print("tracking made common:", modes(makeTrackingCommon: true))
// whileTracking: ["common"], afterwards: ["common", "default"]
print("tracking not common: ", modes(makeTrackingCommon: false))
// whileTracking: [], afterwards: both: `.common` means "the modes marked common", not "every mode"

//: ## 3. GCD workers parked in their run loops
//: The pattern of "NSURLConnection下载文件并监测下载进度": hop to a global queue and run that
//: worker's run loop until the transfer is over. Here a timer stands in for the transfer. Park
//: one worker more than there are cores, then send one more small job to the global queue.
func parkedWorkers(holdFor seconds: TimeInterval) -> TimeInterval {
    let count = ProcessInfo.processInfo.activeProcessorCount + 1
    let parked = DispatchGroup()
    for _ in 0..<count {
        parked.enter()
        DispatchQueue.global().async {
            let transfer = oneShot(after: seconds) { _ in }
            RunLoop.current.add(transfer, forMode: .default)
            RunLoop.current.run()  // the worker stays here until the "transfer" is over
            parked.leave()
        }
    }
    let sent = Date()
    let ran = DispatchSemaphore(value: 0)
    DispatchQueue.global().async { ran.signal() }
    ran.wait()
    let waited = Date().timeIntervalSince(sent)
    parked.wait()
    return waited
}
print(String(format: "a small job waited %.2f s behind the parked workers", parkedWorkers(holdFor: 3)))
// On Linux 1 to 2 s: libdispatch keeps about one worker per core and adds another only once a
// second while none can run. On a Mac it should run at once, until the pool's own limit is
// reached: try it, and try a larger count.
//: A `Thread` of its own for each transfer costs GCD nothing, and it ends with its run loop.
