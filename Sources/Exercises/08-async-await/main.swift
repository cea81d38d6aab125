/// Exercise 08: runs your Article.swift as `exercise-08-async-await`. Made by `lab exercise reset`.
import EmbeddedServer
import LabHarness
import LabVocabulary

Lesson(.asyncAwait, ways: AsyncAwaitWay.self, program: .exercise).run { run, _ in articleVariant(run) }
