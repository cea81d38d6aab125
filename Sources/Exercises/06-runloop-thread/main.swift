/// Exercise 06: runs your Article.swift as `exercise-06-runloop-thread`. Made by `lab exercise reset`.
import EmbeddedServer
import LabKit
import LabVocabulary

Lesson(.runLoopThread, program: .exercise).run { run in
    download(run, startingEach: ArticleDownload.self, onQueue: ArticleQueueDownload.init)
}
