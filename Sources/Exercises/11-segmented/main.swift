/// Exercise 11: runs your Article.swift as `exercise-11-segmented`. Made by `lab exercise reset`.
import EmbeddedServer
import LabHarness

Lesson(.segmented, program: .exercise).run(articleVariant)
