/// Exercise 09: runs your Article.swift as `exercise-09-background-session`. Made by `lab exercise reset`.
import EmbeddedServer
import LabHarness

Lesson(.backgroundSession, program: .exercise).run(articleVariant)
