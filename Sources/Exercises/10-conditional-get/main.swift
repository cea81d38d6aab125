/// Exercise 10: runs your Article.swift as `exercise-10-conditional-get`. Made by `lab exercise reset`.
import EmbeddedServer
import LabHarness

Lesson(.conditionalGet, program: .exercise).run(articleVariant)
