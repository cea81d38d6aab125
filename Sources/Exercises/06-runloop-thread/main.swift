/// Exercise 06: runs your Article.swift as `exercise-06-runloop-thread`. Made by `lab exercise reset`.
import EmbeddedServer
import LabHarness
import LabVocabulary

Lesson(.runLoopThread, ways: RunLoopThreadWay.self, program: .exercise).run(articleVariant)
