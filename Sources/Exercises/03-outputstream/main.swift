/// Exercise 03: runs your Article.swift as `exercise-03-outputstream`. Made by `lab exercise reset`.
import EmbeddedServer
import LabHarness

Lesson(.outputStream, program: .exercise).run(articleVariant)
